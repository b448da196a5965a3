// A CCIX message on VC1 as a TLM transaction: the payload addressed to the message window, the
// TLP's and the link's attributes, and, for a read (a request with a response, a snoop), the
// message itself as an extension. The request agent sends its requests and the home agent its
// snoops this way. Building a tlm_generic_payload allocates its extension array, and a message
// crosses the link on every system-cache miss and every snoop of the device, so each agent keeps
// a pool of transactions, one per nesting depth, and leases them.
#pragma once

#include <tlm>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/payload.hpp"
#include "link/ccix_message.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

struct CcixTransaction {
    tlm::tlm_generic_payload gp;
    core::TlpExt tlp;
    LinkTlpExt link;
    CcixMessageExt message;
    core::RequestExt request;  // the trace's flow
};

class CcixTransactionPool {
  public:
    // One transaction of the pool, set up afresh; its extensions come off when the lease ends.
    class Lease {
      public:
        // `flow`: the trace's request this transaction serves (0: none).
        Lease(CcixTransactionPool& pool, bool write, uint8_t* data, uint32_t length,
              core::TlpExt::Type type, uint64_t flow);
        ~Lease();
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        CcixTransaction& operator*() const { return *t_; }
        CcixTransaction* operator->() const { return t_; }
        // Attaches the message `h` (encoded here) with h.length data bytes after the header,
        // which the caller writes into message.bytes.
        void attach_message(const CcixHeader& h);

      private:
        CcixTransactionPool& pool_;
        CcixTransaction* t_;
        bool with_message_ = false;
    };

  private:
    std::vector<std::unique_ptr<CcixTransaction>> transactions_;
    size_t in_use_ = 0;
};

}  // namespace canopy::link
