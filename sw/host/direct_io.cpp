// The Direct-IO kernel module (Willow Section 3.1, Figure 2; "Non-volatile storage protection"):
// grants at open, revokes at close, permission misses resolved; see direct_io.hpp.
#include "sw/host/direct_io.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/willow_apps.hpp"

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
    const bool append = flags & O_APPEND;
    Opened o{handle, rights, ino.size, ino.extents, -1, *number};
    if (append) {
        if (!(rights & SPU_OS_PERM_WRITE))
            throw host::HostFault("Direct-IO: " + who + " opens " + path +
                                  " for appending without writing");
        try {
            o.append_spu = int(open_append(cpu, *number, g));
        } catch (const host::HostFault&) {
            --g.opens;
            throw;
        }
    }
    records_[handle] = Record{pid, *number, append};
    ++stats_.opens;
    return o;
}

uint32_t DirectIoModule::open_append(host::HostCore& cpu, uint32_t inode, Grant& g) {
    const BlockGeometry& geo = fs_.kernel().geometry();
    const BlockGeometry::Location size = geo.locate(fs_.size_field_offset(inode));
    WillowApps& apps = *fs_.kernel().on(cpu).apps;
    const uint32_t pid = cpu.process().pid;
    // The size's 8 bytes join what the process holds of the file (close revokes them, a miss
    // grants them again).
    const NvmRange field{size.spu, size.nvm, 8};
    if (std::none_of(g.ranges.begin(), g.ranges.end(),
                     [&](const NvmRange& r) { return r.spu == field.spu && r.nvm == field.nvm; })) {
        g.ranges.push_back(field);
        apps.grant(pid, field.nvm, field.bytes, g.rights, {field.spu});
    }
    if (appending_[inode]++ > 0) return size.spu;  // open there already
    const WillowFs::Inode& ino = fs_.inode(inode);
    block_io_append_open a{};
    a.handle = inode;
    a.size_addr = size.nvm;
    a.size = uint32_t(ino.size);
    a.capacity = uint32_t(std::min<uint64_t>(ino.allocated(), UINT32_MAX));
    a.node = size.spu;
    a.spus = geo.spus;
    a.bank_bytes = uint32_t(geo.bank_bytes);
    a.extents = uint32_t(ino.extents.size());
    for (size_t k = 0; k < ino.extents.size(); ++k)
        a.extent[k] = {uint32_t(ino.extents[k].file_offset),
                       uint32_t(ino.extents[k].device_offset / BLOCK_IO_BLOCK_BYTES),
                       uint32_t(ino.extents[k].bytes)};
    const uint32_t r =
        apps.hre()
            .call(uint8_t(size.spu), SPU_OS_RPC_ID(cfg_.direct_io_app, BLOCK_IO_APPEND_OPEN), &a,
                  sizeof a)
            .result;
    if (r != SPU_OS_OK) {
        --appending_[inode];
        throw host::HostFault("Direct-IO: APPEND_OPEN of " + ino.path + " on SPU " +
                              std::to_string(size.spu) + " failed: " + spu_os_result_name(r));
    }
    return size.spu;
}

void DirectIoModule::close(host::HostCore& cpu, uint32_t handle) {
    cpu.compute_ns(fs_.config().syscall_ns);
    const auto it = records_.find(handle);
    if (it == records_.end() || it->second.pid != cpu.process().pid)
        throw host::HostFault("Direct-IO: process pid " + std::to_string(cpu.process().pid) +
                              " closes an unknown file handle " + std::to_string(handle));
    const Key key{it->second.pid, it->second.inode};
    const bool append = it->second.append;
    records_.erase(it);
    ++stats_.closes;
    if (append && --appending_[key.second] == 0) {
        // The last appender: the SPU forgets the file, the file system reads its size back.
        const BlockGeometry::Location size =
            fs_.kernel().geometry().locate(fs_.size_field_offset(key.second));
        const uint32_t r =
            fs_.kernel()
                .on(cpu)
                .apps->hre()
                .call(uint8_t(size.spu), SPU_OS_RPC_ID(cfg_.direct_io_app, BLOCK_IO_APPEND_CLOSE),
                      &key.second, sizeof key.second)
                .result;
        if (r != SPU_OS_OK)
            throw host::HostFault("Direct-IO: APPEND_CLOSE of inode " + std::to_string(key.second) +
                                  " failed: " + spu_os_result_name(r));
        fs_.reload(cpu, key.second);
    }
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
    if (n.denied()) {
        ++stats_.denied;  // refused already; nothing to resolve (docs/spu_os.md "Protection")
        return false;
    }
    ++stats_.misses;
    const uint32_t node = n.words[0], pid = n.words[1], addr = n.words[3], bytes = n.words[4],
                   rights = n.words[5];
    // The range of an open file or an app region of the process, with the rights, that covers
    // the access; nullptr when none.
    auto covering = [&](uint32_t holder, const Grant& g) -> const NvmRange* {
        if (holder != pid || (g.rights & rights) != rights) return nullptr;
        for (const NvmRange& r : g.ranges)
            if (r.spu == node && addr >= r.nvm &&
                uint64_t(addr) + bytes <= uint64_t(r.nvm) + r.bytes)
                return &r;
        return nullptr;
    };
    std::pair<const NvmRange*, uint32_t> found{nullptr, 0};
    for (const auto& [key, g] : grants_)
        if (!found.first) found = {covering(key.first, g), g.rights};
    for (const auto& [holder, g] : regions_)
        if (!found.first) found = {covering(holder, g), g.rights};
    if (!found.first) {
        ++stats_.unresolved;  // nothing it holds so: the refusal stands
        return false;
    }
    const NvmRange& r = *found.first;
    try {
        apps.grant(pid, r.nvm, r.bytes, found.second, {r.spu});
    } catch (const host::HostFault&) {
        // SPU-OS refused (its process table full): the kernel thread goes on; the library's
        // retries run out and the process sees the permission fault.
        ++stats_.unresolved;
        return false;
    }
    ++stats_.regranted;
    return true;
}

void DirectIoModule::grant_region(WillowApps& apps, uint32_t pid,
                                  const std::vector<NvmRange>& ranges, uint32_t rights) {
    for (const NvmRange& r : ranges) apps.grant(pid, r.nvm, r.bytes, rights, {r.spu});
    regions_.push_back({pid, Grant{1, rights, ranges}});
}

void DirectIoModule::serve_notices(host::HostCore& cpu, const bool& stop) {
    WillowApps& apps = fs_.kernel().notices(cpu);
    while (!stop) {
        if (auto n = apps.try_notice())
            resolve(apps, *n);
        else
            apps.hre().wait_change(cfg_.notice_poll_ns);  // asleep until a notice (or stop)
    }
}

}  // namespace canopy::sw
