// crc_accelerator: a TLM-2.0 model built outside Canopy against its installed headers
// (find_package(Canopy), Canopy::model) and loaded by `canopy run --model
// libcrc_accelerator.so`. A CRC-32 unit on the Willow SSD's token ring: it owns a network
// interface like an SPU's, and SPU apps or host HREs send it RPCs; it answers each with the
// CRC-32 (IEEE 802.3, as zlib's crc32) of the request's payload. Timing: a fixed set-up plus the
// payload at the unit's throughput (assumed: 4 B per ns, a 32-bit-per-cycle unit at 1 GHz), then
// the response on the ring. Its keys are model.crc.*, its statistics and trace track model.crc.
#include <boost/crc.hpp>
#include <cstdint>
#include <vector>

#include "platform/user_model.hpp"

namespace {

using namespace canopy;

class CrcAccelerator : public platform::UserModel {
  public:
    struct Config {
        double setup_ns = 20.0;     // assumed: reading the header, starting the unit
        double bytes_per_ns = 4.0;  // assumed: 32 bits per cycle at 1 GHz
        ssd::NiConfig ni;           // its network interface: an SPU's defaults
        void describe(core::Params& p) {
            p("setup_ns", setup_ns, "ns", "time from a request's arrival to the unit's start", 0.0,
              1e6)("bytes_per_ns", bytes_per_ns, "B/ns", "the unit's throughput", 0.01, 1000.0);
        }
    };

    SC_HAS_PROCESS(CrcAccelerator);
    CrcAccelerator(sc_core::sc_module_name name, const Config& cfg, core::Services& services)
        : UserModel(name),
          cfg_(cfg),
          services_(services),
          ni_("ni", cfg.ni, services),
          requests_(services.stats.counter(this->name(), "requests", "CRC requests served", true)),
          bytes_(services.stats.counter(this->name(), "bytes", "payload bytes checksummed")),
          busy_(services.stats.sum(this->name(), "busy", "ns", "time the unit computed")) {
        SC_THREAD(serve);
    }

    ssd::NetworkInterface* ring_interface() override { return &ni_; }

  private:
    void serve() {
        const int track = services_.trace.enabled() ? services_.trace.track(name()) : -1;
        for (;;) {
            while (!ni_.has_request()) wait(ni_.arrival_event());
            const ssd::MessageHeader h = *ni_.request_head();
            std::vector<uint8_t> data(h.length);
            ni_.read_request(data.data(), data.size());
            ni_.pop_request();
            boost::crc_32_type crc;
            crc.process_bytes(data.data(), data.size());
            const sc_core::sc_time start = sc_core::sc_time_stamp();
            const double ns = cfg_.setup_ns + double(data.size()) / cfg_.bytes_per_ns;
            wait(sc_core::sc_time(ns, sc_core::SC_NS));
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            ni_.send_response(h.src, h.tag, crc.checksum(), delay);
            requests_.add(1);
            bytes_.add(data.size());
            busy_.add(ns);
            if (track >= 0)
                services_.trace.complete(
                    track, "crc32", "model", start, sc_core::sc_time(ns, sc_core::SC_NS), 0,
                    {{"bytes", std::to_string(data.size())}, {"from node", std::to_string(h.src)}});
            wait(delay);  // the response leaves the interface
        }
    }

    Config cfg_;
    core::Services& services_;
    ssd::NetworkInterface ni_;
    core::Counter &requests_, &bytes_;
    core::Sum& busy_;
};

}  // namespace

CANOPY_MODEL_LIBRARY(registry) {
    registry.add<CrcAccelerator>("crc", canopy::platform::Attach::ring,
                                 "a CRC-32 unit on the SSD's ring");
}
