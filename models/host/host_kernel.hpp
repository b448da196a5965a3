// The host kernel's memory services for simulated host programs (seeds/003 Sections III-IV: the
// N1-SDP runs Linux with 4 KiB pages and boot-time huge pages of 64 KiB, 2 MiB, 32 MiB and 1 GiB;
// the lock table lives in pinned huge-page memory): processes with their page tables in host
// memory, mmap-like allocation, munmap, pinning, and mapping a device's BAR into a process.
//
// The kernel's own software time is not simulated here: a HostCore charges one system call's
// cost around each service. Its memory maintenance is functional: freed frames are dropped
// from every cache and zeroed, so a frame handed out again (as data or as a page table) holds
// zeros and no stale line can be written back over it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "host/home_node.hpp"
#include "host/host_memory.hpp"
#include "host/iommu.hpp"
#include "host/page_table.hpp"

namespace canopy::host {

class HostKernel {
  public:
    struct Process {
        uint32_t pid = 0;  // also its PASID: the device's ATS requests name it
        std::string name;
        std::unique_ptr<AddressSpace> space;
    };

    // With an IOMMU, every process is bound to it under its PASID (so a device may use its
    // virtual addresses through ATS).
    HostKernel(HostMemory& memory, HomeNode& home, Iommu* iommu = nullptr);

    // pids (and PASIDs) count from 1.
    Process& create_process(const std::string& name);
    Process* find_process(uint32_t pid);

    // Throw HostKernelError with the reason (no memory, bad size, not mapped, pinned).
    uint64_t mmap(Process& p, uint64_t bytes, uint64_t page_bytes = kPage4K);
    void munmap(Process& p, uint64_t va, uint64_t bytes);
    void pin(Process& p, uint64_t va, uint64_t bytes, bool pinned = true);
    uint64_t map_device(Process& p, uint64_t pa, uint64_t bytes);

    FrameAllocator& frames() { return frames_; }
    HostMemory& memory() { return memory_; }
    HomeNode& home() { return home_; }

  private:
    HostMemory& memory_;
    HomeNode& home_;
    Iommu* iommu_;
    FrameAllocator frames_;
    std::deque<Process> processes_;
};

}  // namespace canopy::host
