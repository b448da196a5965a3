// The Direct-IO kernel module (Willow Section 3.1, Figure 2; "Non-volatile storage protection"):
// grants at open, revokes at close, permission misses resolved; see direct_io.hpp.
#include "sw/host/direct_io.hpp"

#include <algorithm>

#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::sw {

std::vector<NvmRange> nvm_ranges(const BlockGeometry& geo, uint64_t offset, uint64_t bytes) {
    std::vector<NvmRange> out;
    for (uint64_t done = 0; done < bytes;) {
        const BlockGeometry::Location l = geo.locate(offset + done);
        const uint32_t n = uint32_t(std::min<uint64_t>(l.bytes, bytes - done));
        NvmRange* same = nullptr;
        for (NvmRange& r : out)
            if (r.spu == l.spu) same = &r;
        if (same && same->nvm + same->bytes == l.nvm)
            same->bytes += n;  // the next row of that bank: still one range
        else
            out.push_back({l.spu, l.nvm, n});
        done += n;
    }
    return out;
}

bool permission_refused(const host::HostFault& f) {
    return std::string(f.what()).find("SPU_OS_E_PERMISSION") != std::string::npos;
}

DirectIoModule::DirectIoModule(WillowFs& fs, DirectIoModuleConfig cfg) : fs_(fs), cfg_(cfg) {}

DirectIoModule::Opened DirectIoModule::open(host::HostCore& cpu, const std::string& path,
                                            int flags) {
    cpu.compute_ns(fs_.config().syscall_ns + cfg_.open_ns);
    const uint32_t pid = cpu.process().pid;
    const std::string who = "process " + cpu.process().name + " (pid " + std::to_string(pid) + ")";
    const auto number = fs_.lookup(path);
    if (!number) throw host::HostFault("Direct-IO: " + who + " opens " + path + ": no such file");
    const uint32_t rights = rights_of(flags);
    if (!fs_.may_access(*number, pid, rights))
        throw host::HostFault("Direct-IO: " + who + " may not open " + path + " for " +
                              (rights & SPU_OS_PERM_WRITE ? "writing" : "reading"));
    const WillowFs::Inode& ino = fs_.inode(*number);
    Grant& g = grants_[{pid, *number}];
    if (g.opens == 0 || (g.rights | rights) != g.rights) {
        // Each extent, on each SPU it reaches: one PERM_ADD (the same start replaces an entry,
        // so a wider second open just widens the rights).
        g.rights |= rights;
        g.ranges.clear();
        for (const FileExtent& e : ino.extents)
            for (const NvmRange& r : nvm_ranges(fs_.kernel().geometry(), e.device_offset, e.bytes))
                g.ranges.push_back(r);
        WillowApps& apps = *fs_.kernel().on(cpu).apps;
        for (const NvmRange& r : g.ranges) apps.grant(pid, r.nvm, r.bytes, g.rights, {r.spu});
    }
    ++g.opens;
    const uint32_t handle = next_handle_++;
    records_[handle] = Record{pid, *number};
    ++stats_.opens;
    return Opened{handle, rights, ino.size, ino.extents};
}

void DirectIoModule::close(host::HostCore& cpu, uint32_t handle) {
    cpu.compute_ns(fs_.config().syscall_ns);
    const auto it = records_.find(handle);
    if (it == records_.end() || it->second.pid != cpu.process().pid)
        throw host::HostFault("Direct-IO: process pid " + std::to_string(cpu.process().pid) +
                              " closes an unknown file handle " + std::to_string(handle));
    const Key key{it->second.pid, it->second.inode};
    records_.erase(it);
    ++stats_.closes;
    Grant& g = grants_[key];
    if (--g.opens > 0) return;
    WillowApps& apps = *fs_.kernel().on(cpu).apps;
    for (const NvmRange& r : g.ranges) {
        try {
            apps.revoke(key.first, r.nvm, {r.spu});
        } catch (const host::HostFault& f) {
            // SPU-OS evicted the entry meanwhile: nothing left to revoke there.
            if (std::string(f.what()).find("SPU_OS_E_BAD_ARG") == std::string::npos) throw;
        }
    }
    grants_.erase(key);
}

bool DirectIoModule::resolve(WillowApps& apps, const SpuNotice& n) {
    seen_.push_back(n);
    if (n.fault()) {
        ++stats_.faults;  // the app is disabled; the kernel tells its users (not the module's)
        return false;
    }
    ++stats_.misses;
    const uint32_t node = n.words[0], pid = n.words[1], addr = n.words[3], bytes = n.words[4],
                   rights = n.words[5];
    for (const auto& [key, g] : grants_) {
        if (key.first != pid || (g.rights & rights) != rights) continue;
        for (const NvmRange& r : g.ranges) {
            if (r.spu != node || addr < r.nvm || uint64_t(addr) + bytes > uint64_t(r.nvm) + r.bytes)
                continue;
            try {
                apps.grant(pid, r.nvm, r.bytes, g.rights, {r.spu});
            } catch (const host::HostFault&) {
                // SPU-OS refused (its process table full): the kernel thread goes on; the
                // library's retries run out and the process sees the permission fault.
                ++stats_.unresolved;
                return false;
            }
            ++stats_.regranted;
            return true;
        }
    }
    ++stats_.unresolved;  // not a file it has open so: the refusal stands
    return false;
}

void DirectIoModule::serve_notices(host::HostCore& cpu, const bool& stop) {
    WillowApps& apps = fs_.kernel().notices(cpu);
    while (!stop) {
        if (auto n = apps.try_notice())
            resolve(apps, *n);
        else
            cpu.compute_ns(cfg_.notice_poll_ns);
    }
}

}  // namespace canopy::sw
