// TLM-2.0 payload extensions. `Extension<T>` supplies clone/copy_from once; the extensions that
// several areas share live here (request identity for the trace, PCIe/CCIX attributes, the
// originating host RPC endpoint). Area-specific ones (the NAND command) derive from the same
// helper.
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

}  // namespace canopy::core
