#include "ssd/ni_registers.hpp"

#include <string>
#include <vector>

namespace canopy::ssd {

using core::Access;
using sc_core::sc_time;

namespace {
constexpr uint64_t kBegin = 1u << 0, kFinish = 1u << 1, kRespond = 1u << 2, kAbort = 1u << 3;
constexpr uint64_t kPopRequest = 1u << 0, kPopResponse = 1u << 1;

// Node in bits 7:0, a 16-bit value in bits 31:16: the layout of tx_dst, rx_src and resp_src.
std::vector<core::Field> node_and(const std::string& hi, const std::string& hi_desc,
                                  const std::string& node_desc) {
    return {{"node", 0, 8, node_desc}, {hi, 16, 16, hi_desc}};
}

uint64_t pack(uint64_t lo, uint64_t hi) { return lo | (hi << 16); }
}  // namespace

core::RegisterMap NiRegisters::register_map() {
    std::vector<core::FieldValue> codes;
    const std::pair<NiStatus, const char*> named[] = {
        {NiStatus::Ok, "ok"},
        {NiStatus::NotAttached, "not_attached"},
        {NiStatus::UnknownDestination, "unknown_destination"},
        {NiStatus::RequestOpen, "request_open"},
        {NiStatus::NoRequestOpen, "no_request_open"},
        {NiStatus::TooLong, "too_long"},
        {NiStatus::Incomplete, "incomplete"},
        {NiStatus::NoResponseSlot, "no_response_slot"},
        {NiStatus::Empty, "empty"}};
    for (const auto& [status, id] : named)
        codes.emplace_back(id, uint64_t(status), to_string(status));
    const std::vector<core::Field> rpc_tag = {{"rpc_id", 0, 16, "app << 8 | handler"},
                                              {"tag", 16, 16, "the sender's request tag"}};
    return core::RegisterMap(
        "spu_ni", "an SPU's network interface: RPC headers and commands (payload by DMA)",
        {
            {"origin", 0x00, 32, Access::RW, 0,
             "originating HRE stamped on every request this SPU sends"},
            {"tx_dst", 0x04, 32, Access::RW, 0, "destination of the next request or response",
             node_and("dst_hre", "requests to the bridge: the HRE they are for",
                      "destination ring node")},
            {"tx_rpc", 0x08, 32, Access::RW, 0,
             "the next request's RPC ID and tag (responses: tag)", rpc_tag},
            {"tx_length", 0x0C, 32, Access::RW, 0, "the next request's payload bytes"},
            {"tx_result", 0x10, 32, Access::RW, 0, "the next response's result code"},
            {"tx_command",
             0x14,
             32,
             Access::Trigger,
             0,
             "write 1s: act on tx_dst, tx_rpc, tx_length, tx_result",
             {
                 {"begin_request", 0, 1,
                  "RPCStartRequest: open a request, reserving its response slot"},
                 {"finish_request", 1, 1, "RPCFinishRequest: send the open, complete request"},
                 {"send_response", 2, 1, "RPCSendResponse: send one response flit"},
                 {"abort_request", 3, 1, "drop the open request, freeing its slot"},
             }},
            {"tx_status",
             0x18,
             32,
             Access::RO,
             0,
             "outcome of the last tx_command, and the send side's state",
             {
                 {"code", 0, 8, "the last command's result", codes},
                 {"open", 8, 1, "a request is open (begun, not finished)"},
                 {"slots_free", 16, 8, "response slots neither reserved nor full"},
             }},
            {"rx_status",
             0x1C,
             32,
             Access::RO,
             0,
             "what has arrived",
             {
                 {"request", 0, 1, "a request waits (its header is in rx_*)"},
                 {"response", 1, 1, "a response waits (in resp_*)"},
                 {"requests", 8, 8, "requests waiting"},
                 {"responses", 16, 8, "responses waiting"},
             }},
            {"rx_src", 0x20, 32, Access::RO, 0, "the head request's sender",
             node_and("dst_hre", "the HRE it names (bridge traffic)", "source ring node")},
            {"rx_rpc", 0x24, 32, Access::RO, 0, "the head request's RPC ID and tag", rpc_tag},
            {"rx_origin", 0x28, 32, Access::RO, 0, "the head request's originating HRE"},
            {"rx_length", 0x2C, 32, Access::RO, 0, "the head request's payload bytes"},
            {"rx_unread", 0x30, 32, Access::RO, 0,
             "payload bytes of the head request not yet read (DMA port ni_rx)"},
            {"rx_pop",
             0x34,
             32,
             Access::Trigger,
             0,
             "write 1s: free the head request or response",
             {{"request", 0, 1, "drop the head request (read or not)"},
              {"response", 1, 1, "drop the head response, freeing its slot"}}},
            {"resp_src",
             0x38,
             32,
             Access::RO,
             0,
             "the head response's sender and tag, and whether it is a NACK",
             {{"node", 0, 8, "source ring node"},
              {"nack", 8, 1,
               "a NACK: the receiver had no room and dropped the request (no result)"},
              {"tag", 16, 16, "the tag of the request it answers"}}},
            {"resp_result", 0x3C, 32, Access::RO, 0, "the head response's result"},
        });
}

NiRegisters::NiRegisters(sc_core::sc_module_name name, NetworkInterface& ni,
                         core::Services& services, const core::RegisterBankConfig& cfg)
    : sc_module(name), socket("socket"), ni_(ni), bank_("bank", register_map(), services, cfg) {
    socket.bind(bank_.socket);
    bank_.on_write("origin", [this](const core::RegisterAccess& a) {
        ni_.set_origin(uint32_t(bank_.read("origin")));
        (void)a;
    });
    bank_.on_write("tx_command", [this](const core::RegisterAccess& a) { command(a); });
    bank_.on_write("rx_pop", [this](const core::RegisterAccess& a) { pop(a); });
    bank_.on_read("tx_status", [this](core::RegisterAccess& a) {
        a.value = (bank_.read("tx_status") & 0xff) | (uint64_t(ni_.request_open()) << 8) |
                  (uint64_t(ni_.response_slots_free() & 0xff) << 16);
    });
    bank_.on_read("rx_status", [this](core::RegisterAccess& a) {
        a.value = uint64_t(ni_.has_request()) | (uint64_t(ni_.has_response()) << 1) |
                  (uint64_t(std::min<size_t>(ni_.requests_waiting(), 255)) << 8) |
                  (uint64_t(std::min<size_t>(ni_.responses_waiting(), 255)) << 16);
    });
    // A read-only register showing a field of the head request (or response); 0 when none.
    auto head_field = [this](const char* reg, bool response, auto get) {
        bank_.on_read(reg, [this, response, get](core::RegisterAccess& a) {
            const auto h = response ? ni_.response_head() : ni_.request_head();
            a.value = h ? uint64_t(get(*h)) : 0;
        });
    };
    using H = const MessageHeader&;
    head_field("rx_src", false, [](H h) { return pack(h.src, h.dst_hre); });
    head_field("rx_rpc", false, [](H h) { return pack(h.rpc_id, h.tag); });
    head_field("rx_origin", false, [](H h) { return h.origin_hre; });
    head_field("rx_length", false, [](H h) { return h.length; });
    head_field("resp_src", true, [](H h) { return pack(h.src | (h.nack ? 1u << 8 : 0u), h.tag); });
    head_field("resp_result", true, [](H h) { return h.result; });
    bank_.on_read("rx_unread", [this](core::RegisterAccess& a) { a.value = ni_.request_unread(); });
    SC_THREAD(watch_arrivals);
}

void NiRegisters::command(const core::RegisterAccess& a) {
    const uint64_t t = a.triggered();
    if (!t) return;
    const uint64_t dst = bank_.read("tx_dst"), rpc = bank_.read("tx_rpc");
    const auto node = NodeId(dst & 0xff);
    const auto tag = uint16_t(rpc >> 16);
    sc_time delay = a.at - sc_core::sc_time_stamp();
    NiStatus s = NiStatus::Ok;
    // One command per write; several bits at once act in this order, stopping at a failure.
    if (s == NiStatus::Ok && (t & kAbort)) s = ni_.abort_request();
    if (s == NiStatus::Ok && (t & kBegin))
        s = ni_.begin_request(node, uint16_t(rpc & 0xffff), tag, uint32_t(bank_.read("tx_length")),
                              uint16_t(dst >> 16));
    if (s == NiStatus::Ok && (t & kFinish)) s = ni_.finish_request(delay);
    if (s == NiStatus::Ok && (t & kRespond))
        s = ni_.send_response(node, tag, uint32_t(bank_.read("tx_result")), delay);
    bank_.write("tx_status", uint64_t(s));
}

void NiRegisters::pop(const core::RegisterAccess& a) {
    const uint64_t t = a.triggered();
    NiStatus s = NiStatus::Ok;
    if (t & kPopRequest) s = ni_.pop_request();
    if (s == NiStatus::Ok && (t & kPopResponse)) s = ni_.pop_response();
    report_levels(a.at);  // popping an empty queue changes nothing and says nothing
}

void NiRegisters::report_levels(const sc_time& at) {
    if (levels_) levels_(ni_.has_request(), ni_.has_response(), at);
}

void NiRegisters::watch_arrivals() {
    while (true) {
        wait(ni_.arrival_event());
        report_levels(sc_core::sc_time_stamp());
    }
}

}  // namespace canopy::ssd
