// TLM-2.0 payload extensions. `Extension<T>` supplies clone/copy_from once; the extensions that
// several areas share live here (request identity for the trace, PCIe/CCIX attributes, the
// originating host RPC endpoint). Area-specific ones (the NAND command) derive from the same
// helper. Also the one way to set up a plain memory access.
#pragma once

#include <cstdint>
#include <tlm>

namespace canopy::core {

template <class T>
struct Extension : tlm::tlm_extension<T> {
    tlm::tlm_extension_base* clone() const override { return new T(static_cast<const T&>(*this)); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        static_cast<T&>(*this) = static_cast<const T&>(other);
    }
};

// Identity of the request a transaction belongs to: links its hops in the transaction trace.
struct RequestExt : Extension<RequestExt> {
    uint64_t flow = 0;
};
// The trace flow `gp` belongs to (0: none).
inline uint64_t flow_of(const tlm::tlm_generic_payload& gp) {
    const auto* r = gp.get_extension<RequestExt>();
    return r ? r->flow : 0;
}

// PCIe/CCIX transaction-layer attributes (filled in by the link models).
struct TlpExt : Extension<TlpExt> {
    enum class Type : uint8_t {
        MemRead,
        MemWrite,
        Completion,
        AtsTranslate,
        CcixRequest,
        CcixSnoop
    };
    enum class AddressType : uint8_t { Untranslated, TranslationRequest, Translated };
    Type type = Type::MemRead;
    uint16_t requester_id = 0;
    uint32_t pasid = 0;
    AddressType at = AddressType::Untranslated;
    uint8_t vc = 0;  // VC0: PCIe and ATS, VC1: CCIX
};

// The host RPC endpoint a request came from, stamped by the bridge so firmware cannot forge it.
struct OriginExt : Extension<OriginExt> {
    uint16_t hre = 0;
};

// A plain access of `length` bytes at `address`: streaming width the whole length, no byte
// enables, response incomplete until the target answers.
inline void set_access(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t address,
                       uint8_t* data, unsigned length) {
    gp.set_command(cmd);
    gp.set_address(address);
    gp.set_data_ptr(data);
    gp.set_data_length(length);
    gp.set_streaming_width(length);
    gp.set_byte_enable_ptr(nullptr);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace canopy::core
