// libDirectIO (Willow Section 3.1, Figure 2; Section 4.2): OS-bypass file access through the
// process's own HRE; see lib_direct_io.hpp.
#include "sw/host/lib_direct_io.hpp"

#include <algorithm>

#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/payload.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

DirectIo::DirectIo(host::HostCore& cpu, WillowDriver& driver, DirectIoModule& module, uint32_t app,
                   DirectIoConfig cfg)
    : cpu_(cpu),
      module_(module),
      cfg_(cfg),
      app_(app),
      endpoint_(driver.open(cpu)) {
    hre_ = std::make_unique<Hre>(cpu, endpoint_);
    io_ = std::make_unique<BlockIo>(*hre_, app, module.fs().kernel().geometry(), cfg.block);
}

DirectIo::~DirectIo() = default;  // the HRE stays open: closing needs the core's program

int DirectIo::open(const std::string& path, int flags) {
    DirectIoModule::Opened o = module_.open(cpu_, path, flags);
    int fd = 3;
    while (files_.count(fd)) ++fd;
    files_[fd] = File{std::move(o), 0};
    return fd;
}

DirectIo::File& DirectIo::file(int fd, uint32_t rights) {
    const auto it = files_.find(fd);
    if (it == files_.end()) throw host::HostFault("libDirectIO: no fd " + std::to_string(fd));
    if ((it->second.opened.rights & rights) != rights)
        throw host::HostFault("libDirectIO: fd " + std::to_string(fd) + " is not open for " +
                              (rights & SPU_OS_PERM_WRITE ? "writing" : "reading"));
    return it->second;
}

template <class F>
void DirectIo::with_retries(F transfer) {
    double pause = cfg_.retry_pause_ns;
    for (uint32_t attempt = 0;; ++attempt) {
        try {
            transfer();
            return;
        } catch (const host::HostFault& f) {
            if (!permission_refused(f) || attempt == cfg_.retries) throw;
        }
        ++retried_;
        cpu_.compute_ns(pause);  // the kernel's notice thread installs the entry meanwhile
        pause *= 2;
    }
}

uint64_t DirectIo::pread(int fd, void* buf, uint64_t bytes, uint64_t offset) {
    const File& f = file(fd, SPU_OS_PERM_READ);
    if (offset >= f.opened.size) return 0;
    const uint64_t n = std::min(bytes, f.opened.size - offset);
    auto* dst = static_cast<uint8_t*>(buf);
    return for_each_piece(f.opened.extents, offset, n,
                          [&](uint64_t dev, uint64_t at, uint64_t len) {
                              with_retries([&] { io_->read(dev, dst + at, len); });
                          });
}

void DirectIo::check_write(const File& f, uint64_t bytes, uint64_t offset) const {
    if (offset + bytes > f.opened.size)
        throw host::HostFault("libDirectIO: a write of " + std::to_string(bytes) + " B at " +
                              std::to_string(offset) + " reaches past the file's " +
                              std::to_string(f.opened.size) +
                              " B; Direct-IO does not grow files (use the file system)");
}

std::vector<DirectIo::Piece> DirectIo::locate(int fd, uint64_t offset, uint64_t bytes,
                                              uint32_t rights) {
    std::vector<Piece> out;
    const BlockGeometry& g = io_->geometry();
    for (const DeviceRange& r : ranges(fd, offset, bytes, rights))
        for (uint64_t done = 0; done < r.bytes;) {
            const BlockGeometry::Location l = g.locate(r.device + done);
            const uint32_t n = uint32_t(std::min<uint64_t>(l.bytes, r.bytes - done));
            out.push_back(Piece{l.spu, l.nvm, n, r.at + done});
            done += n;
        }
    return out;
}

std::vector<DeviceRange> DirectIo::ranges(int fd, uint64_t offset, uint64_t bytes,
                                          uint32_t rights) {
    const File& f = file(fd, rights);
    check_write(f, bytes, offset);
    std::vector<DeviceRange> out;
    for_each_piece(f.opened.extents, offset, bytes, [&](uint64_t dev, uint64_t at, uint64_t len) {
        out.push_back({dev, at, len});
    });
    return out;
}

uint64_t DirectIo::pwrite(int fd, const void* buf, uint64_t bytes, uint64_t offset) {
    const File& f = file(fd, SPU_OS_PERM_WRITE);
    check_write(f, bytes, offset);
    const auto* src = static_cast<const uint8_t*>(buf);
    return for_each_piece(f.opened.extents, offset, bytes,
                          [&](uint64_t dev, uint64_t at, uint64_t len) {
                              with_retries([&] { io_->write(dev, src + at, len); });
                          });
}

uint64_t DirectIo::read(int fd, void* buf, uint64_t bytes) {
    File& f = file(fd, SPU_OS_PERM_READ);
    const uint64_t n = pread(fd, buf, bytes, f.position);
    f.position += n;
    return n;
}

uint64_t DirectIo::write(int fd, const void* buf, uint64_t bytes) {
    File& f = file(fd, SPU_OS_PERM_WRITE);
    const uint64_t n = pwrite(fd, buf, bytes, f.position);
    f.position += n;
    return n;
}

uint64_t DirectIo::append(int fd, const void* buf, uint64_t bytes) {
    const File& f = file(fd, SPU_OS_PERM_WRITE);
    if (f.opened.append_spu < 0)
        throw host::HostFault("libDirectIO: fd " + std::to_string(fd) +
                              " is not open for appending (O_APPEND)");
    const auto* src = static_cast<const uint8_t*>(buf);
    std::vector<uint8_t> p;
    for (uint64_t done = 0; done < bytes;) {
        const uint32_t n = uint32_t(std::min<uint64_t>(bytes - done, BLOCK_IO_MAX_BYTES));
        p.clear();
        put(p, block_io_append_args{f.opened.inode, n});
        p.insert(p.end(), src + done, src + done + n);
        with_retries([&] {
            const Hre::Response r =
                hre_->call(uint8_t(f.opened.append_spu), SPU_OS_RPC_ID(app_, BLOCK_IO_APPEND),
                           p.data(), uint32_t(p.size()));
            const uint32_t result = r.ok() ? r.result : SPU_OS_E_DROPPED;
            if (result != SPU_OS_OK)
                throw host::HostFault("libDirectIO: APPEND of " + std::to_string(n) + " B to fd " +
                                      std::to_string(fd) + " on SPU " +
                                      std::to_string(f.opened.append_spu) + " failed: " +
                                      (result == BLOCK_IO_E_FULL
                                           ? "BLOCK_IO_E_FULL (no room left in the file's "
                                             "blocks)"
                                           : spu_os_result_name(result)));
        });
        done += n;
    }
    return bytes;
}

uint64_t DirectIo::lseek(int fd, uint64_t offset) {
    file(fd, 0).position = offset;
    return offset;
}

uint64_t DirectIo::size(int fd) { return file(fd, 0).opened.size; }

void DirectIo::close(int fd) {
    const File& f = file(fd, 0);
    module_.close(cpu_, f.opened.handle);
    files_.erase(fd);
}

}  // namespace canopy::sw
