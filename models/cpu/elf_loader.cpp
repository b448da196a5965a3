#include "cpu/elf_loader.hpp"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "core/error.hpp"
#include "core/user_files.hpp"

namespace canopy::cpu {

namespace {

std::string hex(uint64_t v) {
    char s[24];
    std::snprintf(s, sizeof s, "0x%08llx", static_cast<unsigned long long>(v));
    return s;
}

std::string range(uint64_t lo, uint64_t hi) { return "[" + hex(lo) + ", " + hex(hi) + ")"; }

std::string machine_name(unsigned m) {
    switch (m) {
        case EM_386:
            return "Intel 80386";
        case EM_ARM:
            return "ARM";
        case EM_X86_64:
            return "x86-64";
        case EM_AARCH64:
            return "AArch64";
        case EM_MIPS:
            return "MIPS";
        case EM_PPC:
            return "PowerPC";
        case EM_NONE:
            return "none";
        default:
            return "machine " + std::to_string(m);
    }
}

std::string type_name(unsigned t) {
    switch (t) {
        case ET_NONE:
            return "ET_NONE";
        case ET_REL:
            return "ET_REL, a relocatable object";
        case ET_DYN:
            return "ET_DYN, a shared object or position-independent executable";
        case ET_CORE:
            return "ET_CORE, a core dump";
        default:
            return std::to_string(t);
    }
}

[[noreturn]] void fail(const std::string& file, const std::string& place, const std::string& why) {
    throw InputError(file, place, why);
}

// Far above any SPU program (IMEM and DMEM hold 104 KiB, the ISS's RAM 64 MiB by default) and
// above a host binary given by mistake (a sanitizer build of canopy is ~350 MiB), which the ELF
// checks then name.
constexpr uint64_t kMaxElfBytes = 1024 * core::kMiB;

std::vector<uint8_t> read_file(const std::string& path) {
    const std::string text = core::read_input_file(path, kMaxElfBytes, "an ELF executable");
    return std::vector<uint8_t>(text.begin(), text.end());
}

struct ElfCloser {
    void operator()(Elf* e) const { elf_end(e); }
};

}  // namespace

ElfImage::ElfImage(std::string path) : path_(std::move(path)) {
    bytes_ = read_file(path_);
    const uint64_t size = bytes_.size();
    const std::string file_size = " (the file has " + std::to_string(size) + " bytes)";

    if (size == 0) fail(path_, "", "empty file, not an ELF executable");
    if (size < EI_NIDENT || std::memcmp(bytes_.data(), ELFMAG, SELFMAG) != 0)
        fail(path_, "", "not an ELF file (no \\x7fELF magic)");
    const uint8_t cls = bytes_[EI_CLASS], data = bytes_[EI_DATA];
    if (cls == ELFCLASS64)
        fail(path_, "ELF header", "64-bit ELF (ELFCLASS64); the SPU cores are RV32");
    if (cls != ELFCLASS32) fail(path_, "ELF header", "unknown ELF class " + std::to_string(cls));
    if (data == ELFDATA2MSB) fail(path_, "ELF header", "big-endian ELF; RV32 is little-endian");
    if (data != ELFDATA2LSB)
        fail(path_, "ELF header", "unknown ELF data encoding " + std::to_string(data));
    if (size < sizeof(Elf32_Ehdr))
        fail(path_, "ELF header",
             "truncated: the header needs " + std::to_string(sizeof(Elf32_Ehdr)) + " bytes" +
                 file_size);

    elf_version(EV_CURRENT);
    std::unique_ptr<Elf, ElfCloser> elf(
        elf_memory(reinterpret_cast<char*>(bytes_.data()), bytes_.size()));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
        fail(path_, "", std::string("not a readable ELF file: ") + elf_errmsg(-1));
    const Elf32_Ehdr* eh = elf32_getehdr(elf.get());
    if (!eh) fail(path_, "ELF header", std::string("malformed: ") + elf_errmsg(-1));

    if (eh->e_machine != EM_RISCV)
        fail(path_, "ELF header",
             "built for " + machine_name(eh->e_machine) + ", not RISC-V (EM_RISCV)");
    if (eh->e_type != ET_EXEC)
        fail(path_, "ELF header", "not an executable (type " + type_name(eh->e_type) + ")");
    entry_ = eh->e_entry;

    // Program headers, then each loadable segment's file image, must lie within the file.
    if (eh->e_phnum == 0) fail(path_, "program headers", "none: nothing to load");
    if (eh->e_phentsize != sizeof(Elf32_Phdr))
        fail(path_, "program headers",
             "entry size " + std::to_string(eh->e_phentsize) + ", expected " +
                 std::to_string(sizeof(Elf32_Phdr)));
    const uint64_t ph_end = uint64_t(eh->e_phoff) + uint64_t(eh->e_phnum) * eh->e_phentsize;
    if (ph_end > size)
        fail(path_, "program headers",
             "truncated: they end at byte " + std::to_string(ph_end) + file_size);
    // Copied out through gelf: libelf hands out its x86 in-place headers unaligned when the
    // file puts them at an odd offset (found by tests/fuzz).
    for (unsigned i = 0; i < eh->e_phnum; ++i) {
        GElf_Phdr p;
        if (!gelf_getphdr(elf.get(), int(i), &p))
            fail(path_, "program header " + std::to_string(i),
                 std::string("malformed: ") + elf_errmsg(-1));
        if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
        const std::string place = "segment " + std::to_string(i) + " " +
                                  range(p.p_paddr, uint64_t(p.p_paddr) + p.p_memsz);
        if (p.p_filesz > p.p_memsz)
            fail(path_, place,
                 "file size " + std::to_string(p.p_filesz) + " exceeds memory size " +
                     std::to_string(p.p_memsz));
        if (uint64_t(p.p_offset) + p.p_filesz > size)
            fail(path_, place,
                 "truncated: its data ends at byte " +
                     std::to_string(uint64_t(p.p_offset) + p.p_filesz) + file_size);
        segments_.push_back({uint32_t(p.p_paddr), uint32_t(p.p_vaddr), uint32_t(p.p_filesz),
                             uint32_t(p.p_memsz), uint32_t(p.p_flags), ""});
        offsets_.push_back(p.p_offset);
    }
    if (segments_.empty()) fail(path_, "program headers", "no loadable segment");

    // Section headers (for the symbol table) are optional; when present they must be whole.
    if (eh->e_shoff != 0) {
        const uint64_t sh_end = uint64_t(eh->e_shoff) + uint64_t(eh->e_shnum) * eh->e_shentsize;
        if (sh_end > size)
            fail(path_, "section headers",
                 "truncated: they end at byte " + std::to_string(sh_end) + file_size);
    }
    for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn; scn = elf_nextscn(elf.get(), scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB) continue;
        if (sh.sh_offset + sh.sh_size > size)
            fail(path_, "symbol table",
                 "truncated: it ends at byte " + std::to_string(sh.sh_offset + sh.sh_size) +
                     file_size);
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (!d) fail(path_, "symbol table", std::string("malformed: ") + elf_errmsg(-1));
        const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t k = 0; k < n; ++k) {
            GElf_Sym s;
            if (!gelf_getsym(d, int(k), &s)) continue;
            const int type = GELF_ST_TYPE(s.st_info);
            if (type == STT_SECTION || type == STT_FILE || s.st_shndx == SHN_UNDEF) continue;
            const char* name = elf_strptr(elf.get(), sh.sh_link, s.st_name);
            if (!name || !*name) continue;
            const bool global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
            auto [it, fresh] = symbols_.emplace(name, uint32_t(s.st_value));
            if (!fresh && global) it->second = uint32_t(s.st_value);
        }
    }
}

std::optional<uint32_t> ElfImage::symbol(const std::string& name) const {
    auto it = symbols_.find(name);
    if (it == symbols_.end()) return std::nullopt;
    return it->second;
}

void ElfImage::load(const std::vector<LoadRegion>& regions) {
    auto inside = [](const LoadRegion& r, uint64_t lo, uint64_t hi) {
        return lo >= r.base && hi <= uint64_t(r.base) + r.size;
    };
    std::vector<const LoadRegion*> target;
    for (size_t i = 0; i < segments_.size(); ++i) {
        ElfSegment& s = segments_[i];
        const uint64_t lo = s.paddr, hi = lo + s.memsz;
        auto r = std::find_if(regions.begin(), regions.end(),
                              [&](const LoadRegion& r) { return inside(r, lo, hi); });
        if (r == regions.end()) {
            std::string names;
            for (const auto& m : regions)
                names += (names.empty() ? "" : ", ") + m.name + " " +
                         range(m.base, uint64_t(m.base) + m.size);
            throw InputError(
                path_, "segment " + range(lo, hi),
                "outside memory: it must fit one of " + (names.empty() ? "(no regions)" : names));
        }
        s.region = r->name;
        target.push_back(&*r);
    }
    bool entry_mapped = false;
    for (const auto& r : regions) entry_mapped |= inside(r, entry_, uint64_t(entry_) + 4);
    if (!entry_mapped)
        throw InputError(path_, "ELF header", "entry point " + hex(entry_) + " is outside memory");

    for (const auto* r : target)
        if (!r->data && !r->write)
            throw std::invalid_argument("LoadRegion " + r->name + ": no data, no writer");
    static const uint8_t kZeros[4096] = {};
    for (size_t i = 0; i < segments_.size(); ++i) {
        const ElfSegment& s = segments_[i];
        const LoadRegion& r = *target[i];
        auto put = [&](uint32_t addr, const uint8_t* src, uint32_t len) {
            if (r.data)
                std::memcpy(r.data + (addr - r.base), src, len);
            else
                r.write(addr, src, len);
        };
        if (s.filesz) put(s.paddr, bytes_.data() + offsets_[i], s.filesz);
        for (uint32_t done = s.filesz; done < s.memsz;) {
            const uint32_t n = std::min<uint32_t>(s.memsz - done, sizeof kZeros);
            if (r.data)
                std::memset(r.data + (s.paddr + done - r.base), 0, n);
            else
                put(s.paddr + done, kZeros, n);
            done += n;
        }
    }
}

ElfImage load_elf(const std::string& path, const std::vector<LoadRegion>& regions) {
    ElfImage image(path);
    image.load(regions);
    return image;
}

}  // namespace canopy::cpu
