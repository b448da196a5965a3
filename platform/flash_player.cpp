#include "platform/flash_player.hpp"

#include <openssl/evp.h>

#include <sysc/kernel/sc_spawn.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <algorithm>
#include <cstdio>

#include "core/payload.hpp"

namespace canopy::platform {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

std::string sha256_hex(const uint8_t* data, size_t n) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data, n, md, &len, EVP_sha256(), nullptr);
    std::string s;
    char b[3];
    for (unsigned i = 0; i < len; ++i) std::snprintf(b, sizeof b, "%02x", md[i]), s += b;
    return s;
}

FlashPlayer::FlashPlayer(sc_core::sc_module_name name, uint32_t channels, uint32_t dies_per_channel,
                         core::Services& services, sc_time quantum)
    : sc_module(name),
      channel("channel", channels),
      dies_per_channel_(dies_per_channel),
      services_(services),
      quantum_(quantum),
      track_(services.trace.track(this->name())) {}

void FlashPlayer::load(std::vector<FlashOp> ops, std::string script_name) {
    ops_ = std::move(ops);
    script_name_ = std::move(script_name);
    results_.assign(ops_.size(), FlashResult{});
    syncs_.clear();
    for (size_t i = 0; i < ops_.size(); ++i)
        if (ops_[i].kind == FlashOp::Sync) syncs_.push_back(i);
    syncs_.push_back(ops_.size());
}

void FlashPlayer::before_end_of_elaboration() {
    for (uint32_t c = 0; c < channel.size(); ++c)
        for (uint32_t d = 0; d < dies_per_channel_; ++d, ++running_)
            sc_core::sc_spawn(
                [this, c, d] { queue(c, d); },
                ("queue_ch" + std::to_string(c) + "_die" + std::to_string(d)).c_str());
}

// All queues meet here at their own finish times; the last to arrive is the latest, so the
// barrier opens at the sync's time.
void FlashPlayer::barrier(const sc_time& finished) {
    if (finished > sc_core::sc_time_stamp()) wait(finished - sc_core::sc_time_stamp());
    if (++arrived_ < channel.size() * dies_per_channel_) {
        wait(released_);
        return;
    }
    arrived_ = 0;
    released_.notify(SC_ZERO_TIME);
    wait(released_);
}

void FlashPlayer::queue(uint32_t ch, uint32_t die) {
    tlm::tlm_generic_payload gp;
    core::RequestExt req;
    gp.set_extension(&req);
    tlm_utils::tlm_quantumkeeper qk;
    qk.set_global_quantum(quantum_);
    qk.reset();
    size_t begin = 0;
    for (size_t s : syncs_) {
        for (size_t i = begin; i < s; ++i) {
            FlashOp& op = ops_[i];
            if (op.channel != ch || op.cmd.chip_enable != die) continue;
            sc_time local = qk.get_local_time();
            send(op, results_[i], gp, local);
            qk.set(local);
            if (qk.need_sync()) qk.sync();
        }
        const sc_time finished = qk.get_current_time();
        qk.reset();
        barrier(finished);
        if (s < ops_.size()) {  // the sync op itself: report when it opened
            results_[s].issue_ps = results_[s].done_ps = sc_core::sc_time_stamp().value();
            finished_at_ = sc_core::sc_time_stamp();
        }
        begin = s + 1;
    }
    finished_at_ = std::max(finished_at_, sc_core::sc_time_stamp());
    --running_;
    gp.clear_extension(&req);  // stack-owned: the payload must not free it
}

// Sends one op `local` after the kernel's time; `local` comes back as the time the die is ready.
void FlashPlayer::send(FlashOp& op, FlashResult& r, tlm::tlm_generic_payload& gp, sc_time& local) {
    // Data phases laid out in cycle order in one buffer.
    std::vector<uint8_t> buffer, page;
    size_t din = 0;
    uint32_t out_bytes = 0;
    for (uint16_t c = 0; c < op.cmd.n_cycles; ++c) {
        const auto& cy = op.cmd.cycles[c];
        if (cy.kind == nand::Cycle::DataIn) {
            (din < op.data_in.size() ? op.data_in[din] : DataSpec{}).generate(page, cy.length);
            ++din;
            page.resize(cy.length, 0xFF);
            buffer.insert(buffer.end(), page.begin(), page.end());
        } else if (cy.kind == nand::Cycle::DataOut) {
            buffer.insert(buffer.end(), cy.length, 0);
            out_bytes += cy.length;
        }
    }
    auto* req = gp.get_extension<core::RequestExt>();
    req->flow = services_.trace.enabled() ? services_.trace.new_flow() : 0;
    const sc_time issue = sc_core::sc_time_stamp() + local;
    gp.set_command(tlm::TLM_IGNORE_COMMAND);
    gp.set_data_ptr(buffer.data());
    gp.set_data_length(uint32_t(buffer.size()));
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    gp.set_extension(&op.cmd);
    channel[op.channel]->b_transport(gp, local);
    gp.clear_extension(&op.cmd);
    const sc_time done = sc_core::sc_time_stamp() + local;
    r.issue_ps = issue.value();
    r.done_ps = done.value();
    r.energy_pj = op.cmd.energy_pj;
    r.status = op.cmd.status;
    r.error = op.cmd.error;
    if (gp.get_response_status() != tlm::TLM_OK_RESPONSE && r.error.empty())
        r.error = std::string("transaction failed: ") + gp.get_response_string();
    if (r.error.empty() && out_bytes && (op.capture || op.report))
        r.out.assign(buffer.end() - out_bytes, buffer.end());
    if (!r.error.empty() != op.expect_fail) {
        std::string where = op.line ? script_name_ + ":" + std::to_string(op.line) + ": " : "";
        failures_.push_back(
            where + op.label + ": " +
            (r.error.empty() ? std::string("expected to be refused but succeeded") : r.error));
    }
    if (req->flow) {
        // A script's command has its label; a generated one is named by what the die did.
        const std::string name = !op.label.empty() ? op.label
                                                   : std::string(nand::op_name(op.cmd.op)) + " ch" +
                                                         std::to_string(op.channel) + ".die" +
                                                         std::to_string(op.cmd.chip_enable);
        services_.trace.complete(track_, name.c_str(), "flash", issue, done - issue, req->flow);
    }
}

static std::string us(uint64_t ps) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f us", double(ps) * 1e-6);
    return b;
}

void FlashPlayer::print_report(std::ostream& os) const {
    for (size_t i = 0; i < ops_.size(); ++i)
        if (ops_[i].report) report(os, ops_[i], results_[i]);
}

void FlashPlayer::report(std::ostream& os, const FlashOp& op, const FlashResult& r) const {
    std::string where = op.line ? script_name_ + ":" + std::to_string(op.line) + ": " : "";
    char head[64];
    std::snprintf(head, sizeof head, "[%12.3f us] ", double(r.done_ps) * 1e-6);
    os << head << where << op.label;
    if (op.kind == FlashOp::Sync) {
        os << "\n";
        return;
    }
    if (!r.error.empty()) {
        os << ": refused" << (op.expect_fail ? " as expected" : "") << ": " << r.error << "\n";
        return;
    }
    char e[32];
    std::snprintf(e, sizeof e, "%.4f uJ", r.energy_pj * 1e-6);
    os << ": latency " << us(r.done_ps - r.issue_ps) << ", energy " << e;
    const auto op_kind = op.cmd.op;
    if (op_kind == nand::OpKind::ReadStatus && !r.out.empty()) {
        char s[16];
        std::snprintf(s, sizeof s, "%02X", r.out[0]);
        os << ", status " << s << ((r.out[0] & nand::status::kFail) ? " FAIL" : "");
    } else if (op_kind == nand::OpKind::GetFeatures && r.out.size() == 4) {
        char s[32];
        std::snprintf(s, sizeof s, "%02X %02X %02X %02X", r.out[0], r.out[1], r.out[2], r.out[3]);
        os << ", P1-P4 " << s;
    } else if (op_kind == nand::OpKind::DataOut) {
        uint64_t ones = 0;
        for (uint8_t b : r.out) ones += uint64_t(__builtin_popcount(b));
        std::string first;
        char h[4];
        for (size_t i = 0; i < std::min<size_t>(16, r.out.size()); ++i)
            std::snprintf(h, sizeof h, "%02X", r.out[i]), first += h;
        os << "\n    bytes " << r.out.size() << " popcount " << ones << " sha256 "
           << sha256_hex(r.out.data(), r.out.size()) << " first " << first;
    }
    if (op.expect_fail) os << " (expected to be refused)";
    os << "\n";
}

}  // namespace canopy::platform
