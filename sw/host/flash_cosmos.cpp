#include "sw/host/flash_cosmos.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "ssd/hre_queue.h"
#include "sw/firmware/apps/flash_cosmos_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/payload.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

namespace {

std::string result_name(uint32_t r) {
    switch (r) {
        case FC_E_ARGS:
            return "FC_E_ARGS";
        case FC_E_ORDER:
            return "FC_E_ORDER";
        case FC_E_PLAN:
            return "FC_E_PLAN (an expression the latches cannot compute)";
        default:
            return spu_os_result_name(r);
    }
}

}  // namespace

const char* fc_op_name(FcOp op) {
    static const char* const names[] = {"AND", "OR", "NAND", "NOR", "XOR", "XNOR", "AND-OR"};
    return names[int(op)];
}

const char* fc_system_name(FcSystem s) {
    static const char* const names[] = {"Flash-Cosmos", "ParaBit", "ISP", "OSP"};
    return names[int(s)];
}

FlashCosmos::FlashCosmos(host::HostCore& cpu, Hre& hre, uint32_t app, FcGeometry g)
    : cpu_(cpu), hre_(hre), app_(app), g_(g) {
    if (g_.spus == 0 || g_.units() == 0 || g_.units() > FC_UNITS || g_.page_bytes == 0 ||
        g_.page_bytes > 0xFFFF || g_.wordlines == 0 || g_.wordlines > FC_MAX_WORDLINES ||
        app_ == SPU_OS_KERNEL_APP || app_ > 0xFF)
        throw host::HostFault("Flash-Cosmos library: bad geometry (" + std::to_string(g_.spus) +
                              " SPUs, " + std::to_string(g_.units()) + " planes per SPU (at most " +
                              std::to_string(FC_UNITS) + "), " + std::to_string(g_.page_bytes) +
                              " B pages, " + std::to_string(g_.wordlines) +
                              " wordlines) or app id " + std::to_string(app_));
}

std::vector<FlashCosmos::Piece> FlashCosmos::pieces(uint64_t bytes) const {
    std::vector<Piece> v;
    for (uint64_t off = 0, i = 0; off < bytes; off += g_.page_bytes, ++i) {
        Piece p;
        p.spu = uint32_t(i % g_.spus);
        p.unit = uint32_t(i / g_.spus % g_.units());
        p.row = uint32_t(i / (uint64_t(g_.spus) * g_.units()));
        p.offset = uint32_t(off);
        p.bytes = uint32_t(std::min<uint64_t>(g_.page_bytes, bytes - off));
        v.push_back(p);
    }
    return v;
}

uint8_t FlashCosmos::fw_group(uint32_t group, uint32_t row) {
    const auto key = std::make_pair(group, row);
    auto it = groups_.find(key);
    if (it != groups_.end()) return it->second;
    if (groups_.size() >= FC_GROUPS)
        throw host::HostFault("fc_write: group " + std::to_string(group) + " row " +
                              std::to_string(row) + " needs a firmware group, and all " +
                              std::to_string(FC_GROUPS) + " are taken");
    const uint8_t id = uint8_t(groups_.size());
    groups_[key] = id;
    return id;
}

std::vector<uint8_t> FlashCosmos::read_request(uint8_t code, size_t n, const Piece& p) const {
    std::vector<uint8_t> b;
    put(b, fc_read_args{code, uint8_t(n), uint8_t(p.unit), uint8_t(g_.wordlines),
                        uint8_t(p.unit / g_.planes), uint8_t(p.unit % g_.planes), uint16_t(p.bytes),
                        0});
    return b;
}

void FlashCosmos::run(const std::vector<Piece>& ps, uint16_t handler,
                      const std::vector<std::vector<uint8_t>>& payloads, std::vector<uint8_t>* out,
                      const std::string& what) {
    const uint16_t data_rpc = SPU_OS_RPC_ID(app_, FC_DATA);
    std::vector<std::vector<size_t>> queue(g_.spus);  // per SPU, its pieces in order
    for (size_t i = 0; i < ps.size(); ++i) queue[ps[i].spu].push_back(i);
    std::vector<size_t> next(g_.spus, 0);
    std::map<uint16_t, size_t> flights;  // tag -> piece
    std::map<uint32_t, size_t> cookies;  // DATA cookie -> piece
    std::string failure;
    auto launch = [&](uint32_t spu) {
        if (!failure.empty() || next[spu] >= queue[spu].size()) return;
        const size_t i = queue[spu][next[spu]++];
        std::vector<uint8_t> p = payloads[i];
        if (out) {  // the cookie is the read arguments' last word
            const uint32_t cookie = next_cookie_++;
            std::memcpy(p.data() + offsetof(fc_read_args, cookie), &cookie, 4);
            cookies[cookie] = i;
        }
        flights[hre_.send(uint8_t(spu), SPU_OS_RPC_ID(app_, handler), p.data(),
                          uint32_t(p.size()))] = i;
    };
    for (uint32_t s = 0; s < g_.spus; ++s) launch(s);
    while (!flights.empty()) {
        bool progress = false;
        while (hre_.poll()) progress = true;
        while (auto req = hre_.try_receive_in_place(data_rpc)) {
            progress = true;
            fc_data d{};
            if (req->length >= sizeof d) hre_.copy_payload(*req, 0, &d, sizeof d);
            auto c = cookies.find(d.cookie);
            if (req->length < sizeof d || c == cookies.end() || req->length != sizeof d + d.bytes ||
                d.bytes != ps[c->second].bytes) {
                hre_.release(*req);
                hre_.respond(*req, SPU_OS_E_BAD_ARG);
                failure = what + ": a DATA request from SPU " + std::to_string(req->node) +
                          " matches no piece in flight";
                continue;
            }
            const Piece& p = ps[c->second];
            hre_.copy_payload(*req, sizeof d, out->data() + p.offset, p.bytes);
            stats_.sensings += d.sensings;
            stats_.bytes_in += p.bytes;
            cookies.erase(c);
            hre_.release(*req);
            hre_.respond(*req, 0);
        }
        for (auto it = flights.begin(); it != flights.end();) {
            if (!hre_.has_response(it->first)) {
                ++it;
                continue;
            }
            const Hre::Response r = *hre_.try_wait(it->first);
            const Piece& p = ps[it->second];
            it = flights.erase(it);
            if (failure.empty() && (!r.ok() || r.result != FC_OK))
                failure =
                    what + ": piece at byte " + std::to_string(p.offset) + " (SPU " +
                    std::to_string(p.spu) + ", plane unit " + std::to_string(p.unit) +
                    ") failed: " +
                    (r.ok() ? result_name(r.result) : "HRE status " + std::to_string(r.status));
            launch(p.spu);
            progress = true;
        }
        if (!progress) hre_.idle();
    }
    if (!failure.empty()) throw host::HostFault(failure);
}

FlashCosmos::Operand FlashCosmos::write(uint32_t group, const void* data, uint64_t bytes,
                                        bool inverted) {
    if (bytes == 0) throw host::HostFault("fc_write: an operand of 0 bytes");
    auto gb = group_bytes_.emplace(group, bytes).first;
    if (gb->second != bytes)
        throw host::HostFault("fc_write: group " + std::to_string(group) + " holds operands of " +
                              std::to_string(gb->second) + " B, not " + std::to_string(bytes));
    const auto ps = pieces(bytes);
    const auto* src = static_cast<const uint8_t*>(data);
    std::vector<std::vector<uint8_t>> payloads;
    Operand o{group, 0, bytes, inverted};
    for (const Piece& p : ps) {
        const uint8_t fg = fw_group(group, p.row);
        o.seq = next_seq_[fg];
        if (o.seq >= FC_GROUP_BLOCKS * g_.wordlines)
            throw host::HostFault("fc_write: group " + std::to_string(group) + " is full (" +
                                  std::to_string(o.seq) + " operands)");
        std::vector<uint8_t> b;
        put(b,
            fc_write_args{fg, uint8_t(o.seq), uint8_t(p.unit),
                          inverted ? uint8_t(FC_INVERTED) : uint8_t(0), uint8_t(p.unit / g_.planes),
                          uint8_t(p.unit % g_.planes), uint8_t(g_.wordlines), 0});
        for (uint32_t k = 0; k < p.bytes; ++k)
            b.push_back(inverted ? uint8_t(~src[p.offset + k]) : src[p.offset + k]);
        payloads.push_back(std::move(b));
    }
    run(ps, FC_WRITE, payloads, nullptr, "fc_write of group " + std::to_string(group));
    for (const Piece& p : ps)
        if (p.spu == 0 && p.unit == 0) ++next_seq_[fw_group(group, p.row)];
    return o;
}

std::vector<uint8_t> FlashCosmos::read(FcOp op, const std::vector<Operand>& operands,
                                       FcSystem system) {
    if (operands.empty() || operands.size() > FC_MAX_OPERANDS)
        throw host::HostFault("fc_read: " + std::to_string(operands.size()) + " operands (1.." +
                              std::to_string(FC_MAX_OPERANDS) + ")");
    for (const Operand& o : operands)
        if (o.bytes != operands[0].bytes)
            throw host::HostFault("fc_read: operands of different sizes");
    if (op == FcOp::AndOr && operands.size() < 2)
        throw host::HostFault("fc_read: AND-OR needs two operands or more");
    if (system == FcSystem::Osp) return osp(op, operands);
    // The expression as the app takes it: a sum of products, its complement, or an XOR chain.
    uint8_t code = FC_OP_SOP;
    if (op == FcOp::Nand || op == FcOp::Nor) code = FC_OP_NSOP;
    if (op == FcOp::Xor) code = FC_OP_XOR;
    if (op == FcOp::Xnor) code = FC_OP_XNOR;
    if (system == FcSystem::ParaBit) code |= FC_SERIAL;
    if (system == FcSystem::Isp) code |= FC_ISP;
    const bool own_terms = op == FcOp::Or || op == FcOp::Nor;
    const auto ps = pieces(operands[0].bytes);
    std::vector<std::vector<uint8_t>> payloads;
    for (const Piece& p : ps) {
        std::vector<uint8_t> b = read_request(code, operands.size(), p);
        for (size_t i = 0; i < operands.size(); ++i) {
            const uint8_t term = own_terms                                       ? uint8_t(i)
                                 : op == FcOp::AndOr && i + 1 == operands.size() ? 1
                                                                                 : 0;
            put(b,
                fc_operand{fw_group(operands[i].group, p.row), uint8_t(operands[i].seq), term, 0});
        }
        payloads.push_back(std::move(b));
    }
    std::vector<uint8_t> out(operands[0].bytes);
    run(ps, FC_READ, payloads, &out,
        std::string("fc_read ") + fc_op_name(op) + " on " + fc_system_name(system));
    return out;
}

// Outside-storage processing: every operand page is read out raw; the host core combines the
// vectors word by word as they arrive (one cycle per 64-bit word and operand, assumed).
std::vector<uint8_t> FlashCosmos::osp(FcOp op, const std::vector<Operand>& operands) {
    const auto ps = pieces(operands[0].bytes);
    std::vector<std::vector<uint8_t>> in;
    for (const Operand& o : operands) {
        std::vector<std::vector<uint8_t>> payloads;
        for (const Piece& p : ps) {
            std::vector<uint8_t> b = read_request(FC_OP_READ, 1, p);
            put(b, fc_operand{fw_group(o.group, p.row), uint8_t(o.seq), 0, 0});
            payloads.push_back(std::move(b));
        }
        std::vector<uint8_t> v(o.bytes);
        run(ps, FC_READ, payloads, &v, "OSP read of an operand");
        if (o.inverted)
            for (auto& x : v) x = uint8_t(~x);
        stats_.pages_read += ps.size();
        in.push_back(std::move(v));
    }
    const uint64_t words = (operands[0].bytes + 7) / 8;
    cpu_.compute_cycles(words * operands.size());
    stats_.host_words += words * operands.size();
    return reference(op, in);
}

std::vector<uint8_t> FlashCosmos::reference(FcOp op, const std::vector<std::vector<uint8_t>>& in) {
    std::vector<uint8_t> r = in.at(0);
    const size_t last = in.size() - 1;
    for (size_t i = 1; i < in.size(); ++i)
        for (size_t k = 0; k < r.size(); ++k) {
            const uint8_t x = in[i][k];
            switch (op) {
                case FcOp::And:
                case FcOp::Nand:
                    r[k] &= x;
                    break;
                case FcOp::Or:
                case FcOp::Nor:
                    r[k] |= x;
                    break;
                case FcOp::Xor:
                case FcOp::Xnor:
                    r[k] ^= x;
                    break;
                case FcOp::AndOr:
                    r[k] = i == last ? uint8_t(r[k] | x) : uint8_t(r[k] & x);
                    break;
            }
        }
    if (op == FcOp::Nand || op == FcOp::Nor || op == FcOp::Xnor)
        for (auto& x : r) x = uint8_t(~x);
    return r;
}

void FlashCosmos::release_all() {
    std::vector<Piece> ps;
    std::vector<std::vector<uint8_t>> payloads;
    for (const auto& [key, fg] : groups_)
        for (uint32_t s = 0; s < g_.spus; ++s)
            for (uint32_t u = 0; u < g_.units(); ++u) {
                ps.push_back({s, u, key.second, 0, 0});
                std::vector<uint8_t> b;
                put(b, fc_release_args{fg, uint8_t(u), uint8_t(u / g_.planes),
                                       uint8_t(u % g_.planes)});
                payloads.push_back(std::move(b));
            }
    run(ps, FC_RELEASE, payloads, nullptr, "fc release");
    groups_.clear();
    group_bytes_.clear();
    next_seq_.clear();
}

}  // namespace canopy::sw
