// Small stand-ins for the host side, shared by the device-side tests (ATC, DMA engine, CTG):
// a flat memory with a fixed latency and a translation agent answering ATS requests from a
// table, the way the host IOMMU will.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstring>
#include <map>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/payload.hpp"
#include "link/atc.hpp"

namespace canopy::link::testing {

inline double ns(const sc_core::sc_time& t) { return t / sc_core::sc_time(1, sc_core::SC_NS); }

// Memory at [base, base + size) with a fixed latency per transaction; anything outside answers
// TLM_ADDRESS_ERROR_RESPONSE. Bytes start as a pattern of their offset.
struct FakeMemory : sc_core::sc_module {
    struct Seen {
        uint64_t address;
        uint32_t length;
        bool write;
        core::TlpExt::AddressType at;
    };
    tlm_utils::simple_target_socket<FakeMemory> socket;
    uint64_t base;
    std::vector<uint8_t> bytes;
    sc_core::sc_time latency;
    std::vector<Seen> seen;

    FakeMemory(sc_core::sc_module_name n, uint64_t b, size_t size, double latency_ns = 0)
        : sc_module(n),
          socket("socket"),
          base(b),
          bytes(size),
          latency(latency_ns, sc_core::SC_NS) {
        socket.register_b_transport(this, &FakeMemory::b_transport);
        for (size_t i = 0; i < size; ++i) bytes[i] = uint8_t(i * 13 + 5);
    }
    uint8_t* at(uint64_t address) { return bytes.data() + (address - base); }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const auto* tlp = gp.get_extension<core::TlpExt>();
        seen.push_back({gp.get_address(), gp.get_data_length(), gp.is_write(),
                        tlp ? tlp->at : core::TlpExt::AddressType::Untranslated});
        if (gp.get_address() < base ||
            gp.get_address() + gp.get_data_length() > base + bytes.size())
            return gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        if (gp.is_write())
            std::memcpy(at(gp.get_address()), gp.get_data_ptr(), gp.get_data_length());
        else
            std::memcpy(gp.get_data_ptr(), at(gp.get_address()), gp.get_data_length());
        delay += latency;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

// Answers ATS translation requests from a table of mappings after a fixed latency; an unmapped
// address gets R = W = 0, or an error response when `error_response` is set.
struct FakeTranslator : sc_core::sc_module {
    struct Request {
        uint64_t address;
        uint32_t length;
        bool ats;  // carried a TlpExt AtsTranslate / TranslationRequest
    };
    tlm_utils::simple_target_socket<FakeTranslator> socket;
    sc_core::sc_time latency;
    bool error_response = false;
    std::map<uint64_t, AtsEntry> pages;  // virtual page base -> translation
    std::vector<Request> requests;

    explicit FakeTranslator(sc_core::sc_module_name n, double latency_ns = 617)
        : sc_module(n), socket("socket"), latency(latency_ns, sc_core::SC_NS) {
        socket.register_b_transport(this, &FakeTranslator::b_transport);
    }
    void map(uint64_t va, uint64_t pa, uint64_t page_bytes, bool write = true) {
        pages[va] = AtsEntry{pa, page_bytes, true, write};
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const auto* tlp = gp.get_extension<core::TlpExt>();
        const bool ats = tlp && tlp->type == core::TlpExt::Type::AtsTranslate &&
                         tlp->at == core::TlpExt::AddressType::TranslationRequest;
        requests.push_back({gp.get_address(), gp.get_data_length(), ats});
        delay += latency;
        if (error_response || !ats || gp.is_write() || gp.get_data_length() != kAtsEntryBytes)
            return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        AtsEntry e;  // R = W = 0 unless a mapping covers the address
        const uint64_t va = gp.get_address();
        for (const auto& [base, t] : pages)
            if (va >= base && va - base < t.page_bytes) e = t;
        const uint64_t raw = e.encode();
        for (uint32_t i = 0; i < kAtsEntryBytes; ++i)
            gp.get_data_ptr()[i] = uint8_t(raw >> (8 * i));
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

// A bare initiator, e.g. to drive (or just bind) the link's host_target.
struct FakeInitiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<FakeInitiator> socket;
    explicit FakeInitiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
};

}  // namespace canopy::link::testing
