#include "link/traffic_generator.hpp"

#include "link/tlp.hpp"

namespace canopy::link {

namespace {
double ns(const sc_core::sc_time& t) { return ns_of(t); }
}  // namespace

void CtgConfig::describe(core::Params& p) {
    core::Params c = p.scope("link").scope("ctg");
    c("device_buffer_address", device_buffer_address, "",
      "device-memory address of the CTG buffer for DMA requests [assumed]")(
        "issue_ns", issue_ns, "ns", "CTG time from startTrans to the request [assumed 0]", 0.0,
        1e6);
}

TrafficGenerator::TrafficGenerator(sc_core::sc_module_name name, const CtgConfig& cfg,
                                   core::Services& services, DmaEngine* dma)
    : sc_module(name),
      direct_initiator("direct_initiator"),
      cfg_(cfg),
      dma_(dma),
      issue_(cfg.issue_ns, sc_core::SC_NS),
      requests_(services.stats.counter(this->name(), "requests", "requests issued", true)),
      errors_(services.stats.counter(this->name(), "errors", "requests that failed", true)) {
    const char* access[2] = {"dma", "direct"};
    const char* dir[2] = {"read", "write"};
    for (int a = 0; a < 2; ++a)
        for (int w = 0; w < 2; ++w)
            latency_[a][w] = &services.stats.distribution(
                this->name(), std::string("latency.") + access[a] + "." + dir[w], "ns",
                std::string(access[a]) + " " + dir[w] + " latency, issue to last data");
}

bool TrafficGenerator::issue_direct(bool write, uint64_t address, uint64_t bytes,
                                    sc_core::sc_time& delay) {
    if (data_.size() < bytes) data_.resize(bytes);
    if (write)
        for (uint64_t i = 0; i < bytes; ++i) data_[i] = uint8_t(address + i);  // a known pattern
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(data_.data());
    gp.set_data_length(uint32_t(bytes));
    gp.set_streaming_width(uint32_t(bytes));
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    direct_initiator->b_transport(gp, delay);
    return gp.is_response_ok();
}

uint32_t TrafficGenerator::run(const CtgRequest& req, sc_core::sc_time& delay) {
    uint32_t ok_count = 0;
    for (uint32_t i = 0; i < req.count; ++i) {
        if (i) delay += req.gap;
        const uint64_t address = req.address + i * req.stride_bytes;
        const sc_core::sc_time start = delay;
        delay += issue_;
        bool ok = false;
        if (req.access == CtgAccess::Direct) {
            ok = req.bytes > 0 && req.bytes <= UINT32_MAX &&
                 issue_direct(req.write, address, req.bytes, delay);
        } else if (dma_) {
            DmaDescriptor d;
            d.direction = req.write ? DmaDirection::DeviceToHost : DmaDirection::HostToDevice;
            d.host_address = address;
            d.device_address = cfg_.device_buffer_address;
            d.length = req.bytes;
            ok = dma_->execute(d, delay).ok;
        }
        const double latency = ns(delay - start);
        requests_.add();
        if (ok) {
            ++ok_count;
            latency_[req.access == CtgAccess::Direct][req.write]->sample(latency);
        } else {
            errors_.add();
        }
        samples_.push_back(CtgSample{req.access, req.write, ok, address, req.bytes,
                                     ns(sc_core::sc_time_stamp() + start), latency});
    }
    return ok_count;
}

std::vector<double> TrafficGenerator::latencies_ns() const {
    std::vector<double> v;
    v.reserve(samples_.size());
    for (const CtgSample& s : samples_) v.push_back(s.latency_ns);
    return v;
}

}  // namespace canopy::link
