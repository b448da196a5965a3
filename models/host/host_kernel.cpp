#include "host/host_kernel.hpp"

#include <vector>

namespace canopy::host {

HostKernel::HostKernel(HostMemory& memory, HomeNode& home, Iommu* iommu)
    : memory_(memory), home_(home), iommu_(iommu), frames_(memory.size()) {}

HostKernel::Process& HostKernel::create_process(const std::string& name) {
    Process& p = processes_.emplace_back();
    p.pid = uint32_t(processes_.size());
    p.name = name;
    p.space = std::make_unique<AddressSpace>(memory_, frames_);
    if (iommu_) iommu_->attach(p.pid, *p.space);
    return p;
}

HostKernel::Process* HostKernel::find_process(uint32_t pid) {
    return pid >= 1 && pid <= processes_.size() ? &processes_[pid - 1] : nullptr;
}

uint64_t HostKernel::mmap(Process& p, uint64_t bytes, uint64_t page_bytes) {
    return p.space->mmap(bytes, page_bytes);
}

void HostKernel::munmap(Process& p, uint64_t va, uint64_t bytes) {
    std::vector<Translation> freed;
    for (uint64_t a = va; a < va + bytes;) {
        auto t = p.space->translate(a);
        if (!t) break;  // AddressSpace::munmap reports it
        freed.push_back(*t);
        a = t->va_base + t->page_bytes;
    }
    p.space->munmap(va, bytes);
    for (const Translation& t : freed) {
        home_.discard(t.pa_base, t.page_bytes);
        memory_.zero(t.pa_base, t.page_bytes);
    }
}

void HostKernel::pin(Process& p, uint64_t va, uint64_t bytes, bool pinned) {
    p.space->pin(va, bytes, pinned);
}

uint64_t HostKernel::map_device(Process& p, uint64_t pa, uint64_t bytes) {
    return p.space->map_device(pa, bytes);
}

}  // namespace canopy::host
