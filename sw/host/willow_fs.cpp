// The host kernel's file system on Base-IO (Willow Section 3.1 "Willow usage model"): on-device
// layout, allocation and the system calls; see willow_fs.hpp.
#include "sw/host/willow_fs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::sw {

namespace {

constexpr uint32_t kMagic = 0x31534657;  // "WFS1"

// The superblock, block 0 of the device.
struct DiskSuper {
    uint32_t magic, block_bytes, inode_count, bitmap_start, bitmap_blocks, inode_start,
        inode_blocks, data_start;
    uint64_t blocks;
};

// An inode as it lies in the inode table.
struct DiskInode {
    uint32_t used, owner, mode, extents;
    uint64_t size, mtime_ns;
    struct {
        uint32_t start_block, blocks;
    } extent[WillowFs::kMaxExtents];
    char name[WillowFs::kNameBytes];
};
static_assert(sizeof(DiskInode) == WillowFs::kInodeBytes);

uint64_t blocks_for(uint64_t bytes) {
    return (bytes + WillowFs::kBlockBytes - 1) / WillowFs::kBlockBytes;
}

}  // namespace

uint64_t for_each_piece(const std::vector<FileExtent>& extents, uint64_t offset, uint64_t bytes,
                        const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
    uint64_t done = 0;
    for (const FileExtent& e : extents) {
        if (done == bytes) break;
        const uint64_t at = offset + done;
        if (at < e.file_offset) break;  // a hole: not allocated
        if (at >= e.file_offset + e.bytes) continue;
        const uint64_t n = std::min(bytes - done, e.file_offset + e.bytes - at);
        fn(e.device_offset + (at - e.file_offset), done, n);
        done += n;
    }
    return done;
}

uint32_t rights_of(int flags) {
    switch (flags & O_ACCMODE) {
        case O_RDONLY:
            return SPU_OS_PERM_READ;
        case O_WRONLY:
            return SPU_OS_PERM_WRITE;
        default:
            return SPU_OS_PERM_READ | SPU_OS_PERM_WRITE;
    }
}

uint64_t WillowFs::Inode::allocated() const {
    return extents.empty() ? 0 : extents.back().file_offset + extents.back().bytes;
}

WillowFs::WillowFs(KernelHres& kernel, WillowFsConfig cfg) : kernel_(kernel), cfg_(cfg) {}

std::string WillowFs::who(host::HostCore& cpu) const {
    return "process " + cpu.process().name + " (pid " + std::to_string(cpu.process().pid) + ")";
}

void WillowFs::format(host::HostCore& cpu, uint64_t bytes, uint32_t inodes) {
    const uint64_t device = kernel_.geometry().device_bytes();
    if (bytes == 0 || bytes > device) bytes = device;
    blocks_ = bytes / kBlockBytes;
    inode_count_ = inodes;
    bitmap_start_ = 1;
    bitmap_blocks_ = uint32_t(blocks_for((blocks_ + 7) / 8));
    inode_start_ = bitmap_start_ + bitmap_blocks_;
    inode_blocks_ = uint32_t(blocks_for(uint64_t(inodes) * kInodeBytes));
    data_start_ = inode_start_ + inode_blocks_;
    if (data_start_ >= blocks_)
        throw host::HostFault("Willow FS: " + std::to_string(bytes) + " B is too small a device");
    DiskSuper s{kMagic,       kBlockBytes,   inode_count_, bitmap_start_, bitmap_blocks_,
                inode_start_, inode_blocks_, data_start_,  blocks_};
    std::vector<uint8_t> block(kBlockBytes, 0);
    std::memcpy(block.data(), &s, sizeof s);
    device_write(cpu, 0, block.data(), kBlockBytes);
    // An empty inode table; a bitmap with the metadata's own blocks taken.
    const std::vector<uint8_t> zeros(uint64_t(inode_blocks_) * kBlockBytes, 0);
    device_write(cpu, uint64_t(inode_start_) * kBlockBytes, zeros.data(), zeros.size());
    used_.assign(blocks_, false);
    std::fill(used_.begin(), used_.begin() + data_start_, true);
    commit_bitmap(cpu, 0, blocks_);
    inodes_.assign(inode_count_, std::nullopt);
    fds_.clear();
}

void WillowFs::mount(host::HostCore& cpu) {
    std::vector<uint8_t> block(kBlockBytes);
    device_read(cpu, 0, block.data(), kBlockBytes);
    DiskSuper s;
    std::memcpy(&s, block.data(), sizeof s);
    if (s.magic != kMagic || s.block_bytes != kBlockBytes)
        throw host::HostFault("Willow FS: no file system on the device (bad superblock)");
    blocks_ = s.blocks;
    inode_count_ = s.inode_count;
    bitmap_start_ = s.bitmap_start;
    bitmap_blocks_ = s.bitmap_blocks;
    inode_start_ = s.inode_start;
    inode_blocks_ = s.inode_blocks;
    data_start_ = s.data_start;
    std::vector<uint8_t> bitmap(uint64_t(bitmap_blocks_) * kBlockBytes);
    device_read(cpu, uint64_t(bitmap_start_) * kBlockBytes, bitmap.data(), bitmap.size());
    used_.assign(blocks_, false);
    for (uint64_t b = 0; b < blocks_; ++b) used_[b] = (bitmap[b / 8] >> (b % 8)) & 1;
    std::vector<uint8_t> table(uint64_t(inode_blocks_) * kBlockBytes);
    device_read(cpu, uint64_t(inode_start_) * kBlockBytes, table.data(), table.size());
    inodes_.assign(inode_count_, std::nullopt);
    for (uint32_t i = 0; i < inode_count_; ++i) {
        DiskInode d;
        std::memcpy(&d, table.data() + uint64_t(i) * kInodeBytes, sizeof d);
        if (!d.used) continue;
        Inode& ino = inodes_[i].emplace();
        ino.number = i;
        ino.path.assign(d.name, strnlen(d.name, kNameBytes));
        ino.owner = d.owner;
        ino.mode = d.mode;
        ino.size = d.size;
        ino.mtime_ns = d.mtime_ns;
        uint64_t at = 0;
        for (uint32_t k = 0; k < std::min(d.extents, kMaxExtents); ++k) {
            const uint64_t n = uint64_t(d.extent[k].blocks) * kBlockBytes;
            ino.extents.push_back({at, uint64_t(d.extent[k].start_block) * kBlockBytes, n});
            at += n;
        }
    }
    fds_.clear();
}

void WillowFs::commit_inode(host::HostCore& cpu, const Inode& ino) {
    // The whole block holding the inode goes out, as a journal commits whole blocks.
    constexpr uint32_t per_block = kBlockBytes / kInodeBytes;
    const uint32_t first = ino.number / per_block * per_block;
    std::vector<uint8_t> block(kBlockBytes, 0);
    for (uint32_t i = first; i < std::min(first + per_block, inode_count_); ++i) {
        if (!inodes_[i]) continue;
        const Inode& n = *inodes_[i];
        DiskInode d{};
        d.used = 1;
        d.owner = n.owner;
        d.mode = n.mode;
        d.extents = uint32_t(n.extents.size());
        d.size = n.size;
        d.mtime_ns = n.mtime_ns;
        for (size_t k = 0; k < n.extents.size(); ++k)
            d.extent[k] = {uint32_t(n.extents[k].device_offset / kBlockBytes),
                           uint32_t(n.extents[k].bytes / kBlockBytes)};
        std::memcpy(d.name, n.path.data(), n.path.size());
        std::memcpy(block.data() + uint64_t(i - first) * kInodeBytes, &d, sizeof d);
    }
    device_write(cpu, uint64_t(inode_start_ + first / per_block) * kBlockBytes, block.data(),
                 kBlockBytes);
    ++inode_commits_;
}

void WillowFs::commit_bitmap(host::HostCore& cpu, uint64_t first_block, uint64_t blocks) {
    constexpr uint64_t bits = uint64_t(kBlockBytes) * 8;
    const uint64_t from = first_block / bits, to = (first_block + blocks - 1) / bits;
    std::vector<uint8_t> bitmap((to - from + 1) * kBlockBytes, 0);
    for (uint64_t b = from * bits; b < std::min((to + 1) * bits, blocks_); ++b)
        if (used_[b]) bitmap[(b - from * bits) / 8] |= uint8_t(1u << (b % 8));
    device_write(cpu, (bitmap_start_ + from) * kBlockBytes, bitmap.data(), bitmap.size());
}

std::vector<FileExtent> WillowFs::allocate(uint64_t blocks, uint64_t file_offset) {
    // First fit for the whole run; failing that, the free runs in order (fragmented).
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // start, length
    for (uint64_t b = data_start_; b < blocks_;) {
        if (used_[b]) {
            ++b;
            continue;
        }
        uint64_t e = b;
        while (e < blocks_ && !used_[e]) ++e;
        runs.emplace_back(b, e - b);
        b = e;
    }
    std::vector<FileExtent> out;
    const auto whole =
        std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.second >= blocks; });
    if (whole != runs.end()) runs = {{whole->first, blocks}};
    uint64_t left = blocks;
    for (const auto& [start, length] : runs) {
        if (left == 0) break;
        const uint64_t n = std::min(left, length);
        out.push_back({file_offset, start * kBlockBytes, n * kBlockBytes});
        file_offset += n * kBlockBytes;
        left -= n;
    }
    if (left != 0)
        throw host::HostFault("Willow FS: no space for " + std::to_string(blocks) + " blocks");
    for (const FileExtent& e : out)
        std::fill_n(used_.begin() + int64_t(e.device_offset / kBlockBytes), e.bytes / kBlockBytes,
                    true);
    return out;
}

void WillowFs::grow(host::HostCore& cpu, Inode& ino, uint64_t end) {
    if (end <= ino.size) return;
    const uint64_t have = ino.allocated();
    if (end > have) {
        std::vector<FileExtent> more = allocate(blocks_for(end - have), have);
        for (const FileExtent& e : more) {
            FileExtent* last = ino.extents.empty() ? nullptr : &ino.extents.back();
            if (last && last->device_offset + last->bytes == e.device_offset)
                last->bytes += e.bytes;  // contiguous with the last extent: one extent
            else
                ino.extents.push_back(e);
        }
        if (ino.extents.size() > kMaxExtents)
            throw host::HostFault("Willow FS: " + ino.path + " would need more than " +
                                  std::to_string(kMaxExtents) + " extents");
        for (const FileExtent& e : more)
            commit_bitmap(cpu, e.device_offset / kBlockBytes, e.bytes / kBlockBytes);
    }
    ino.size = end;
}

uint32_t WillowFs::create(host::HostCore& cpu, const std::string& path, uint64_t bytes,
                          uint32_t owner, uint32_t mode, std::optional<uint64_t> size) {
    if (size && *size > bytes)
        throw host::HostFault("Willow FS: " + path + " of " + std::to_string(*size) + " B in " +
                              std::to_string(bytes) + " B of blocks");
    if (path.empty() || path.size() >= kNameBytes)
        throw host::HostFault("Willow FS: bad path '" + path + "'");
    if (lookup(path)) throw host::HostFault("Willow FS: " + path + " exists");
    const auto free =
        std::find_if(inodes_.begin(), inodes_.end(), [](const auto& i) { return !i.has_value(); });
    if (free == inodes_.end()) throw host::HostFault("Willow FS: no free inode for " + path);
    Inode ino;
    ino.number = uint32_t(free - inodes_.begin());
    ino.path = path;
    ino.owner = owner;
    ino.mode = mode;
    ino.mtime_ns = uint64_t(cpu.now_ns());
    grow(cpu, ino, bytes);
    if (size) ino.size = *size;
    Inode& stored = free->emplace(std::move(ino));
    commit_inode(cpu, stored);
    return stored.number;
}

uint64_t WillowFs::size_field_offset(uint32_t number) const {
    inode(number);  // it exists
    return uint64_t(inode_start_) * kBlockBytes + uint64_t(number) * kInodeBytes +
           offsetof(DiskInode, size);
}

void WillowFs::reload(host::HostCore& cpu, uint32_t number) {
    Inode& ino = inode_rw(number);
    DiskInode d;
    device_read(cpu, uint64_t(inode_start_) * kBlockBytes + uint64_t(number) * kInodeBytes, &d,
                sizeof d);
    if (!d.used || d.size > ino.allocated())
        throw host::HostFault("Willow FS: inode " + std::to_string(number) + " of " + ino.path +
                              " reads back corrupt (size " + std::to_string(d.size) + ")");
    ino.size = d.size;
}

std::optional<uint32_t> WillowFs::lookup(const std::string& path) const {
    for (const auto& i : inodes_)
        if (i && i->path == path) return i->number;
    return std::nullopt;
}

WillowFs::Inode& WillowFs::inode_rw(uint32_t number) {
    if (number >= inodes_.size() || !inodes_[number])
        throw host::HostFault("Willow FS: no inode " + std::to_string(number));
    return *inodes_[number];
}

const WillowFs::Inode& WillowFs::inode(uint32_t number) const {
    return const_cast<WillowFs*>(this)->inode_rw(number);
}

bool WillowFs::may_access(uint32_t number, uint32_t pid, uint32_t rights) const {
    const Inode& ino = inode(number);
    // Owner bits 0600, others' 0006 (read 4, write 2, shifted by the class).
    const uint32_t bits = (ino.owner == pid) ? (ino.mode >> 6) & 7 : ino.mode & 7;
    const bool read_ok = !(rights & SPU_OS_PERM_READ) || (bits & 4);
    const bool write_ok = !(rights & SPU_OS_PERM_WRITE) || (bits & 2);
    return read_ok && write_ok;
}

int WillowFs::open(host::HostCore& cpu, const std::string& path, int flags) {
    cpu.compute_ns(cfg_.syscall_ns + cfg_.open_ns);
    const auto number = lookup(path);
    if (!number)
        throw host::HostFault("Willow FS: " + who(cpu) + " opens " + path + ": no such file");
    if (!may_access(*number, cpu.process().pid, rights_of(flags)))
        throw host::HostFault("Willow FS: " + who(cpu) + " may not open " + path);
    auto& table = fds_[cpu.process().pid];
    int fd = 3;  // after stdin, stdout, stderr
    while (table.count(fd)) ++fd;
    table[fd] = File{*number, flags, 0};
    return fd;
}

WillowFs::File& WillowFs::file(host::HostCore& cpu, int fd, uint32_t rights) {
    auto& table = fds_[cpu.process().pid];
    const auto it = table.find(fd);
    if (it == table.end())
        throw host::HostFault("Willow FS: " + who(cpu) + " has no fd " + std::to_string(fd));
    if ((rights_of(it->second.flags) & rights) != rights)
        throw host::HostFault("Willow FS: " + who(cpu) + "'s fd " + std::to_string(fd) +
                              " is not open for " +
                              (rights & SPU_OS_PERM_WRITE ? "writing" : "reading"));
    return it->second;
}

WillowFs::Held::~Held() {
    if (exclusive)
        lock.writer = false;
    else
        --lock.readers;
}

WillowFs::Held WillowFs::lock(host::HostCore& cpu, uint32_t inode, bool exclusive) {
    // Host programs are SystemC threads: between two waits nothing else runs, so the test and
    // the taking below are one atomic step.
    IoLock& l = locks_[inode];
    bool waited = false;
    while (l.writer || (exclusive && l.readers > 0)) {
        waited = true;
        cpu.compute_ns(cfg_.lock_poll_ns);
        cpu.sync();
    }
    lock_waits_ += waited;
    if (exclusive)
        l.writer = true;
    else
        ++l.readers;
    return Held{l, exclusive};
}

void WillowFs::device_read(host::HostCore& cpu, uint64_t offset, void* dst, uint64_t bytes) {
    cpu.compute_ns(cfg_.block_ns);
    kernel_.on(cpu).base_io->read(offset, dst, bytes);
    cpu.compute_ns(cfg_.completion_ns);
}

void WillowFs::device_write(host::HostCore& cpu, uint64_t offset, const void* src, uint64_t bytes) {
    cpu.compute_ns(cfg_.block_ns);
    kernel_.on(cpu).base_io->write(offset, src, bytes);
    cpu.compute_ns(cfg_.completion_ns);
}

uint64_t WillowFs::pread(host::HostCore& cpu, int fd, void* buf, uint64_t bytes, uint64_t offset) {
    cpu.compute_ns(cfg_.syscall_ns + cfg_.read_ns);
    const Inode& ino = inode(file(cpu, fd, SPU_OS_PERM_READ).inode);
    const Held held = lock(cpu, ino.number, false);
    if (offset >= ino.size) return 0;
    const uint64_t n = std::min(bytes, ino.size - offset);
    auto* dst = static_cast<uint8_t*>(buf);
    return for_each_piece(ino.extents, offset, n, [&](uint64_t dev, uint64_t at, uint64_t len) {
        device_read(cpu, dev, dst + at, len);
    });
}

uint64_t WillowFs::pwrite(host::HostCore& cpu, int fd, const void* buf, uint64_t bytes,
                          uint64_t offset) {
    cpu.compute_ns(cfg_.syscall_ns);
    Inode& ino = inode_rw(file(cpu, fd, SPU_OS_PERM_WRITE).inode);
    // The write path's work (the timestamp's transaction, the block mapping) is done under the
    // inode's I/O lock, as XFS takes it first.
    const Held held = lock(cpu, ino.number, cfg_.exclusive_writes);
    cpu.compute_ns(cfg_.write_ns);
    const uint64_t size = ino.size;
    grow(cpu, ino, offset + bytes);
    const auto* src = static_cast<const uint8_t*>(buf);
    const uint64_t n = for_each_piece(
        ino.extents, offset, bytes,
        [&](uint64_t dev, uint64_t at, uint64_t len) { device_write(cpu, dev, src + at, len); });
    // Ordered journaling: the data first, then the inode that points at it.
    if (ino.size != size || cfg_.write_updates_inode) {
        ino.mtime_ns = uint64_t(cpu.now_ns());
        commit_inode(cpu, ino);
    }
    return n;
}

uint64_t WillowFs::read(host::HostCore& cpu, int fd, void* buf, uint64_t bytes) {
    File& f = file(cpu, fd, SPU_OS_PERM_READ);
    const uint64_t n = pread(cpu, fd, buf, bytes, f.position);
    f.position += n;
    return n;
}

uint64_t WillowFs::write(host::HostCore& cpu, int fd, const void* buf, uint64_t bytes) {
    File& f = file(cpu, fd, SPU_OS_PERM_WRITE);
    const uint64_t n = pwrite(cpu, fd, buf, bytes, f.position);
    f.position += n;
    return n;
}

uint64_t WillowFs::lseek(host::HostCore& cpu, int fd, uint64_t offset) {
    cpu.compute_ns(cfg_.syscall_ns);
    file(cpu, fd, 0).position = offset;
    return offset;
}

void WillowFs::close(host::HostCore& cpu, int fd) {
    cpu.compute_ns(cfg_.syscall_ns + cfg_.open_ns);
    file(cpu, fd, 0);
    fds_[cpu.process().pid].erase(fd);
}

}  // namespace canopy::sw
