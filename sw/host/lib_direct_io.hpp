// libDirectIO (Willow Section 3.1 "Willow usage model", Figure 2; Section 4.2): the user-space
// library of the Direct-IO SSD App. It opens an HRE of its own process (the Willow driver) and
// opens files through the Direct-IO kernel module (one system call, which installs the file's
// extents in SPU-OS's permission tables and returns the extent map); then its POSIX-like reads
// and writes translate file offsets to device offsets through that map and go straight to the
// SPUs on the process's HRE with the Direct-IO app: no system call, no file-system code.
//
// Semantics (documented choices):
//  - read/pread past the end of file are short (0 at or after it), as in POSIX; the size is the
//    one the module reported at open.
//  - write/pwrite overwrite the file in place: a write reaching past the file's size throws
//    HostFault (Direct-IO changes no metadata; grow the file through the file system first, or
//    append: opened with O_APPEND, append() adds at the end and the SPU updates the size).
//  - an unknown fd, or a read on a write-only fd and the like, throws HostFault.
//  - a transfer SPU-OS refuses with SPU_OS_E_PERMISSION (an evicted permission entry) is retried
//    after a pause, doubling, up to `retries` times, while the module's notice thread installs
//    the entry again; then the HostFault goes to the caller.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sw/host/direct_io.hpp"

namespace canopy::sw {

struct DirectIoConfig {
    uint32_t retries = 8;          // attempts after the first, on a permission miss
    double retry_pause_ns = 2000;  // first pause; doubled each attempt (assumed)
    BlockIoConfig block;
};

class DirectIo {
  public:
    // In the user process running on `cpu`; `app` is the id Direct-IO is installed as.
    DirectIo(host::HostCore& cpu, WillowDriver& driver, DirectIoModule& module, uint32_t app,
             DirectIoConfig cfg = DirectIoConfig());
    ~DirectIo();
    DirectIo(const DirectIo&) = delete;
    DirectIo& operator=(const DirectIo&) = delete;

    int open(const std::string& path, int flags);
    uint64_t pread(int fd, void* buf, uint64_t bytes, uint64_t offset);
    uint64_t pwrite(int fd, const void* buf, uint64_t bytes, uint64_t offset);
    uint64_t read(int fd, void* buf, uint64_t bytes);
    uint64_t write(int fd, const void* buf, uint64_t bytes);
    // O_APPEND (Willow 4.6, Append): `bytes` at the file's end, wherever that is when each piece
    // (up to 8 KiB) arrives at the SPU holding the inode, which also updates the file's size:
    // no system call, and appenders in several processes never overlap. HostFault when the
    // file's blocks have no room (BLOCK_IO_E_FULL) or the fd is not open for appending.
    uint64_t append(int fd, const void* buf, uint64_t bytes);
    uint64_t lseek(int fd, uint64_t offset);  // SEEK_SET; no system call
    void close(int fd);

    // Where file range [offset, offset + bytes) of fd lies, in file order: one piece per stripe
    // unit it touches (`at`: the piece's offset from `offset`). For libraries on this one's HRE
    // that move file data with other SSD Apps (Atomic-Writes). Throws HostFault as pwrite does
    // for a range past the end of the file, or a fd not open with `rights`.
    struct Piece {
        uint32_t spu = 0, nvm = 0, bytes = 0;
        uint64_t at = 0;
    };
    std::vector<Piece> locate(int fd, uint64_t offset, uint64_t bytes, uint32_t rights);

    // The device ranges of file range [offset, offset + bytes) of fd, in file order (`at`: from
    // `offset`), for an asynchronous engine on the process's own HREs (sw/host/io_engine). Throws
    // HostFault as pwrite does past the end of the file, or for a fd not open with `rights`.
    std::vector<DeviceRange> ranges(int fd, uint64_t offset, uint64_t bytes, uint32_t rights);

    uint64_t size(int fd);                         // the size the module reported at open
    uint64_t retried() const { return retried_; }  // transfers retried after a miss
    Hre& hre() { return *hre_; }

  private:
    struct File {
        DirectIoModule::Opened opened;
        uint64_t position = 0;
    };
    File& file(int fd, uint32_t rights);
    void check_write(const File& f, uint64_t bytes, uint64_t offset) const;
    // `transfer` once, and again after pauses while SPU-OS reports a permission miss.
    template <class F>
    void with_retries(F transfer);

    host::HostCore& cpu_;
    DirectIoModule& module_;
    DirectIoConfig cfg_;
    uint32_t app_;
    HreEndpoint endpoint_;
    std::unique_ptr<Hre> hre_;
    std::unique_ptr<BlockIo> io_;
    std::map<int, File> files_;
    uint64_t retried_ = 0;
};

}  // namespace canopy::sw
