#include "platform/flash_player.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <map>

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

FlashPlayer::FlashPlayer(sc_core::sc_module_name name, uint32_t channels, uint32_t page_bytes,
                         core::Services& services, sc_time quantum, std::ostream* log)
    : sc_module(name),
      channel("channel", channels),
      page_bytes_(page_bytes),
      services_(services),
      quantum_(quantum),
      log_(log),
      track_(services.trace.track(this->name())) {
    SC_HAS_PROCESS(FlashPlayer);
    SC_THREAD(run);
}

void FlashPlayer::load(std::vector<FlashOp> ops, std::string script_name) {
    ops_ = std::move(ops);
    script_name_ = std::move(script_name);
}

static std::string us(uint64_t ps) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f us", double(ps) * 1e-6);
    return b;
}

void FlashPlayer::report(const FlashOp& op, const FlashResult& r) const {
    if (!log_ || !op.report) return;
    std::string where = op.line ? script_name_ + ":" + std::to_string(op.line) + ": " : "";
    char head[64];
    std::snprintf(head, sizeof head, "[%12.3f us] ", double(r.done_ps) * 1e-6);
    *log_ << head << where << op.label;
    if (op.kind == FlashOp::Sync) {
        *log_ << "\n";
        return;
    }
    if (!r.error.empty()) {
        *log_ << ": refused" << (op.expect_fail ? " as expected" : "") << ": " << r.error << "\n";
        return;
    }
    char e[32];
    std::snprintf(e, sizeof e, "%.4f uJ", r.energy_pj * 1e-6);
    *log_ << ": latency " << us(r.done_ps - r.issue_ps) << ", energy " << e;
    const auto op_kind = op.cmd.op;
    if (op_kind == nand::OpKind::ReadStatus && !r.out.empty()) {
        char s[16];
        std::snprintf(s, sizeof s, "%02X", r.out[0]);
        *log_ << ", status " << s << ((r.out[0] & nand::status::kFail) ? " FAIL" : "");
    } else if (op_kind == nand::OpKind::GetFeatures && r.out.size() == 4) {
        char s[32];
        std::snprintf(s, sizeof s, "%02X %02X %02X %02X", r.out[0], r.out[1], r.out[2], r.out[3]);
        *log_ << ", P1-P4 " << s;
    } else if (op_kind == nand::OpKind::DataOut) {
        uint64_t ones = 0;
        for (uint8_t b : r.out) ones += uint64_t(__builtin_popcount(b));
        std::string first;
        char h[4];
        for (size_t i = 0; i < std::min<size_t>(16, r.out.size()); ++i) std::snprintf(h, sizeof h, "%02X", r.out[i]), first += h;
        *log_ << "\n    bytes " << r.out.size() << " popcount " << ones << " sha256 "
              << sha256_hex(r.out.data(), r.out.size()) << " first " << first;
    }
    if (op.expect_fail) *log_ << " (expected to be refused)";
    *log_ << "\n";
}

void FlashPlayer::run() {
    results_.assign(ops_.size(), FlashResult{});
    std::map<std::pair<uint32_t, uint32_t>, sc_time> die_ready;  // (channel, die) -> ready
    sc_time cursor = SC_ZERO_TIME, horizon = SC_ZERO_TIME;
    std::vector<uint8_t> buffer, page;
    tlm::tlm_generic_payload gp;
    core::RequestExt req;
    gp.set_extension(&req);
    for (size_t i = 0; i < ops_.size(); ++i) {
        FlashOp& op = ops_[i];
        FlashResult& r = results_[i];
        if (op.kind == FlashOp::Sync) {
            cursor = std::max(cursor, horizon);
            r.issue_ps = r.done_ps = cursor.value();
            report(op, r);
            continue;
        }
        // Data phases laid out in cycle order in one buffer.
        buffer.clear();
        size_t din = 0;
        for (uint16_t c = 0; c < op.cmd.n_cycles; ++c) {
            const auto& cy = op.cmd.cycles[c];
            if (cy.kind == nand::Cycle::DataIn) {
                const DataSpec spec = din < op.data_in.size() ? op.data_in[din] : DataSpec{};
                ++din;
                spec.generate(page, cy.length);
                page.resize(cy.length, 0xFF);
                buffer.insert(buffer.end(), page.begin(), page.end());
            } else if (cy.kind == nand::Cycle::DataOut) {
                buffer.insert(buffer.end(), cy.length, 0);
            }
        }
        auto key = std::make_pair(op.channel, uint32_t(op.cmd.chip_enable));
        sc_time issue = std::max(cursor, die_ready[key]);
        // Keep within a quantum of the kernel's time.
        if (issue > sc_core::sc_time_stamp() + quantum_) wait(issue - sc_core::sc_time_stamp());
        sc_time delay = issue - sc_core::sc_time_stamp();
        gp.set_command(tlm::TLM_IGNORE_COMMAND);
        gp.set_data_ptr(buffer.data());
        gp.set_data_length(uint32_t(buffer.size()));
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        gp.set_extension(&op.cmd);
        req.flow = services_.trace.enabled() ? services_.trace.new_flow() : 0;
        channel[op.channel]->b_transport(gp, delay);
        gp.clear_extension(&op.cmd);
        sc_time done = sc_core::sc_time_stamp() + delay;
        die_ready[key] = done;
        horizon = std::max(horizon, done);
        r.issue_ps = issue.value();
        r.done_ps = done.value();
        r.energy_pj = op.cmd.energy_pj;
        r.status = op.cmd.status;
        r.error = op.cmd.error;
        if (gp.get_response_status() != tlm::TLM_OK_RESPONSE && r.error.empty())
            r.error = std::string("transaction failed: ") + gp.get_response_string();
        if (op.cmd.op == nand::OpKind::DataOut || op.cmd.op == nand::OpKind::ReadStatus ||
            op.cmd.op == nand::OpKind::GetFeatures) {
            // The data-out phase is the tail of the buffer.
            uint32_t out = 0;
            for (uint16_t c = 0; c < op.cmd.n_cycles; ++c)
                if (op.cmd.cycles[c].kind == nand::Cycle::DataOut) out += op.cmd.cycles[c].length;
            if (r.error.empty() && (op.capture || (log_ && op.report)))
                r.out.assign(buffer.end() - out, buffer.end());
        }
        const bool refused = !r.error.empty();
        if (refused != op.expect_fail) {
            std::string where = op.line ? script_name_ + ":" + std::to_string(op.line) + ": " : "";
            failures_.push_back(where + op.label + ": " +
                                (refused ? r.error : std::string("expected to be refused but succeeded")));
        }
        if (services_.trace.enabled() && req.flow)
            services_.trace.complete(track_, op.label.c_str(), "flash", issue, done - issue, req.flow);
        report(op, r);
        if (!op.capture && !(log_ && op.report)) r.out.clear();
    }
    gp.clear_extension(&req);  // stack-owned: the payload must not free it
    finished_at_ = std::max(cursor, horizon);
    if (finished_at_ > sc_core::sc_time_stamp()) wait(finished_at_ - sc_core::sc_time_stamp());
}

}  // namespace canopy::platform
