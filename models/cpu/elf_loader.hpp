// Loads an RV32 executable (ELF32, little-endian, EM_RISCV, ET_EXEC) into target memories.
// Every loadable segment must lie wholly inside one of the regions the caller names; nothing is
// written unless all of them do. A segment is placed at its physical (load) address, p_paddr,
// as a boot loader would: the SPU firmware keeps the initial values of .data in IMEM and its
// start-up code copies them to DMEM. The bytes beyond a segment's file image, up to its memory
// size, are zero-filled. A bad file throws InputError naming the file and the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace canopy::cpu {

// A memory the loader may write: [base, base + size) of the target's address space.
struct LoadRegion {
    std::string name;  // for messages: "imem"
    uint32_t base = 0;
    uint64_t size = 0;
    // The region's bytes, when the caller can hand them over directly ...
    uint8_t* data = nullptr;
    // ... else a writer: `len` bytes at target address `addr`, all inside the region.
    std::function<void(uint32_t addr, const uint8_t* bytes, uint32_t len)> write;
};

struct ElfSegment {
    uint32_t paddr = 0, vaddr = 0;  // load address, run address
    uint32_t filesz = 0, memsz = 0;
    uint32_t flags = 0;  // PF_R | PF_W | PF_X
    std::string region;  // the region it was loaded into
};

class ElfImage {
  public:
    // Opens and checks `path` (header, program headers, symbols) without loading anything.
    explicit ElfImage(std::string path);

    // Checks that every loadable segment fits a region, then writes them all.
    void load(const std::vector<LoadRegion>& regions);

    const std::string& path() const { return path_; }
    uint32_t entry() const { return entry_; }
    // The loadable segments (PT_LOAD with a nonzero memory size), in file order.
    const std::vector<ElfSegment>& segments() const { return segments_; }
    // The value of a symbol of the symbol table (a global one before a local one of the same
    // name), e.g. "tohost" and "fromhost" of the RISC-V test convention.
    std::optional<uint32_t> symbol(const std::string& name) const;

  private:
    std::string path_;
    uint32_t entry_ = 0;
    std::vector<uint8_t> bytes_;  // the whole file
    std::vector<ElfSegment> segments_;
    std::vector<uint32_t> offsets_;  // file offset of each segment's image
    std::map<std::string, uint32_t> symbols_;
};

// Opens, checks and loads in one go; returns the image (entry point, segments, symbols).
ElfImage load_elf(const std::string& path, const std::vector<LoadRegion>& regions);

}  // namespace canopy::cpu
