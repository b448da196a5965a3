#include "link/ccix_transaction.hpp"

namespace canopy::link {

CcixTransactionPool::Lease::Lease(CcixTransactionPool& pool, bool write, uint8_t* data,
                                  uint32_t length, core::TlpExt::Type type, uint64_t flow)
    : pool_(pool) {
    if (pool.in_use_ == pool.transactions_.size())
        pool.transactions_.push_back(std::make_unique<CcixTransaction>());
    CcixTransaction& t = *(t_ = pool.transactions_[pool.in_use_++].get());
    t.gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    t.gp.set_address(kCcixMessageAddress);
    t.gp.set_data_ptr(data);
    t.gp.set_data_length(length);
    t.gp.set_streaming_width(length);
    t.gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    t.tlp = core::TlpExt();
    t.tlp.type = type;
    t.tlp.vc = 1;
    t.link = LinkTlpExt();
    t.link.single_tlp = true;
    t.message = CcixMessageExt();
    t.gp.set_extension(&t.tlp);
    t.gp.set_extension(&t.link);
    t.request.flow = flow;
    t.gp.set_extension(&t.request);
}

void CcixTransactionPool::Lease::attach_message(const CcixHeader& h) {
    h.encode(t_->message.bytes.data());
    t_->message.length = uint8_t(kCcixHeaderBytes + h.length);
    with_message_ = true;
    t_->gp.set_extension(&t_->message);
}

CcixTransactionPool::Lease::~Lease() {
    t_->gp.clear_extension(&t_->tlp);
    t_->gp.clear_extension(&t_->link);
    t_->gp.clear_extension(&t_->request);
    if (with_message_) t_->gp.clear_extension(&t_->message);
    --pool_.in_use_;
}

}  // namespace canopy::link
