// The ELF loader: a good RV32 executable loads into the regions with its bss zero-filled and its
// symbols found; every kind of bad file is refused with an InputError that names the file and
// the reason, before anything is written. Bad files are made here: by hand, byte by byte, and
// by damaging the firmware the build produced (CANOPY_FIRMWARE_DIR).
#include <elf.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "../temp_dir.hpp"
#include "core/error.hpp"
#include "cpu/elf_loader.hpp"
#include "cpu/spu_map.h"

using canopy::InputError;
using namespace canopy::cpu;
using canopy_test::TempDir;

namespace {

using Bytes = std::vector<uint8_t>;

template <class T>
void put(Bytes& b, size_t at, const T& v) {
    if (b.size() < at + sizeof v) b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
}

// A minimal RV32 executable: one PT_LOAD of `code` at `base` (memory size `memsz`), a symbol
// table with `tohost` and `fromhost` right after the code, and section headers.
Bytes mini_elf(uint32_t base, const Bytes& code, uint32_t memsz) {
    Bytes b;
    const uint32_t phoff = sizeof(Elf32_Ehdr), code_off = 0x100;
    const char strtab[] = "\0tohost\0fromhost\0local_only\0";
    const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0";
    const uint32_t symtab_off = code_off + uint32_t(code.size() + 3) / 4 * 4;
    const uint32_t nsyms = 4;
    const uint32_t strtab_off = symtab_off + nsyms * sizeof(Elf32_Sym);
    const uint32_t shstr_off = strtab_off + sizeof strtab;
    const uint32_t shoff = (shstr_off + sizeof shstrtab + 3) / 4 * 4;

    Elf32_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS32;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_EXEC;
    eh.e_machine = EM_RISCV;
    eh.e_version = EV_CURRENT;
    eh.e_entry = base;
    eh.e_phoff = phoff;
    eh.e_shoff = shoff;
    eh.e_ehsize = sizeof(Elf32_Ehdr);
    eh.e_phentsize = sizeof(Elf32_Phdr);
    eh.e_phnum = 1;
    eh.e_shentsize = sizeof(Elf32_Shdr);
    eh.e_shnum = 5;
    eh.e_shstrndx = 4;
    put(b, 0, eh);

    Elf32_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_offset = code_off;
    ph.p_vaddr = ph.p_paddr = base;
    ph.p_filesz = uint32_t(code.size());
    ph.p_memsz = memsz;
    ph.p_flags = PF_R | PF_W | PF_X;
    ph.p_align = 4;
    put(b, phoff, ph);

    b.resize(code_off);
    b.insert(b.end(), code.begin(), code.end());
    const uint32_t end = base + uint32_t(code.size());
    Elf32_Sym syms[nsyms] = {};
    syms[1] = {1, end, 8, ELF32_ST_INFO(STB_GLOBAL, STT_OBJECT), 0, 1};
    syms[2] = {8, end + 8, 8, ELF32_ST_INFO(STB_GLOBAL, STT_OBJECT), 0, 1};
    syms[3] = {17, base, 0, ELF32_ST_INFO(STB_LOCAL, STT_NOTYPE), 0, 1};
    for (uint32_t i = 0; i < nsyms; ++i) put(b, symtab_off + i * sizeof(Elf32_Sym), syms[i]);
    b.resize(strtab_off);
    b.insert(b.end(), strtab, strtab + sizeof strtab);
    b.insert(b.end(), shstrtab, shstrtab + sizeof shstrtab);
    b.resize(shoff);

    Elf32_Shdr sh[5] = {};
    sh[1] = {
        1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, base, code_off, uint32_t(code.size()), 0, 0, 4,
        0};
    sh[2] = {7, SHT_SYMTAB,       0, 0, symtab_off, nsyms * sizeof(Elf32_Sym), 3, 1,
             4, sizeof(Elf32_Sym)};
    sh[3] = {15, SHT_STRTAB, 0, 0, strtab_off, sizeof strtab, 0, 0, 1, 0};
    sh[4] = {23, SHT_STRTAB, 0, 0, shstr_off, sizeof shstrtab, 0, 0, 1, 0};
    for (int i = 0; i < 5; ++i) put(b, shoff + i * sizeof(Elf32_Shdr), sh[i]);
    return b;
}

std::string write(const TempDir& dir, const std::string& name, const Bytes& b) {
    return dir.write(name, std::string(b.begin(), b.end()));
}

Bytes read(const std::string& path) {
    std::string s = canopy_test::read_text(path);
    return Bytes(s.begin(), s.end());
}

// Runs `f`, expecting an InputError whose message holds `path` and every one of `parts`.
template <class F>
void expect_error(F f, const std::string& path, std::initializer_list<std::string> parts) {
    try {
        f();
        ADD_FAILURE() << path << ": loaded, expected an error with '" << *parts.begin() << "'";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.input(), path);
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        for (const std::string& p : parts)
            EXPECT_NE(what.find(p), std::string::npos) << "missing '" << p << "' in: " << what;
    }
}

// SPU memories, filled with a pattern so that zero-fill and untouched bytes show.
struct SpuMemories {
    Bytes imem = Bytes(SPU_IMEM_SIZE, 0xa5), dmem = Bytes(SPU_DMEM_SIZE, 0xa5);
    std::vector<LoadRegion> regions() {
        return {{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE, imem.data(), nullptr},
                {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE, dmem.data(), nullptr}};
    }
};

#ifdef CANOPY_FIRMWARE_DIR
const std::string kFirmware = std::string(CANOPY_FIRMWARE_DIR) + "/selftest.elf";
#define NEED_FIRMWARE()
#else
const std::string kFirmware;
#define NEED_FIRMWARE() GTEST_SKIP() << "no RISC-V cross compiler: the firmware was not built"
#endif

}  // namespace

TEST(CpuElf, LoadsHandMadeExecutableWithZeroFillAndSymbols) {
    TempDir dir;
    const Bytes code = {0x13, 0x00, 0x00, 0x00, 0x6f, 0x00, 0x00, 0x00};  // nop; j .
    const std::string path = write(dir, "mini.elf", mini_elf(0x80000000u, code, 64));
    Bytes ram(4096, 0xa5);
    ElfImage img = load_elf(path, {{"ram", 0x80000000u, ram.size(), ram.data(), nullptr}});
    EXPECT_EQ(img.entry(), 0x80000000u);
    ASSERT_EQ(img.segments().size(), 1u);
    EXPECT_EQ(img.segments()[0].paddr, 0x80000000u);
    EXPECT_EQ(img.segments()[0].filesz, 8u);
    EXPECT_EQ(img.segments()[0].memsz, 64u);
    EXPECT_EQ(img.segments()[0].region, "ram");
    EXPECT_TRUE(std::equal(code.begin(), code.end(), ram.begin()));
    for (size_t i = 8; i < 64; ++i) ASSERT_EQ(ram[i], 0) << "byte " << i << " not zero-filled";
    EXPECT_EQ(ram[64], 0xa5);  // beyond the segment: untouched
    EXPECT_EQ(img.symbol("tohost"), 0x80000008u);
    EXPECT_EQ(img.symbol("fromhost"), 0x80000010u);
    EXPECT_EQ(img.symbol("local_only"), 0x80000000u);
    EXPECT_FALSE(img.symbol("nothing").has_value());
}

// Found by tests/fuzz (fuzz_elf): program headers at an odd file offset used to be read in
// place through a misaligned pointer (undefined behaviour). They load like aligned ones.
TEST(CpuElf, ProgramHeadersAtAnOddOffsetLoad) {
    TempDir dir;
    const Bytes code = {0x13, 0x00, 0x00, 0x00, 0x6f, 0x00, 0x00, 0x00};  // nop; j .
    Bytes b = mini_elf(0x80000000u, code, 16);
    // A copy of the program header at the file's end, one byte past a word boundary.
    const uint32_t odd = uint32_t(b.size() + 4) / 4 * 4 + 1;
    Elf32_Phdr ph;
    std::memcpy(&ph, b.data() + sizeof(Elf32_Ehdr), sizeof ph);
    put(b, odd, ph);
    put(b, offsetof(Elf32_Ehdr, e_phoff), odd);
    Bytes ram(64, 0xa5);
    ElfImage img =
        load_elf(write(dir, "odd.elf", b), {{"ram", 0x80000000u, ram.size(), ram.data(), nullptr}});
    ASSERT_EQ(img.segments().size(), 1u);
    EXPECT_EQ(img.segments()[0].memsz, 16u);
    EXPECT_TRUE(std::equal(code.begin(), code.end(), ram.begin()));
}

TEST(CpuElf, LoadsThroughAWriter) {
    TempDir dir;
    const Bytes code(100, 0x13);
    const std::string path = write(dir, "mini.elf", mini_elf(0x1000, code, 5000));
    Bytes mem(0x3000, 0xa5);
    unsigned calls = 0;
    LoadRegion r{"mem", 0x0, mem.size(), nullptr, [&](uint32_t addr, const uint8_t* p, uint32_t n) {
                     ASSERT_LE(addr + n, mem.size());
                     std::memcpy(mem.data() + addr, p, n);
                     ++calls;
                 }};
    load_elf(path, {r});
    EXPECT_GE(calls, 2u);  // the image, then zeros
    EXPECT_EQ(mem[0x1000], 0x13);
    EXPECT_EQ(mem[0x1000 + 99], 0x13);
    EXPECT_EQ(mem[0x1000 + 100], 0);
    EXPECT_EQ(mem[0x1000 + 4999], 0);
    EXPECT_EQ(mem[0x1000 + 5000], 0xa5);
    EXPECT_EQ(mem[0xfff], 0xa5);
}

TEST(CpuElf, LoadsFirmwareIntoSpuMemories) {
    NEED_FIRMWARE();
    SpuMemories m;
    ElfImage img = load_elf(kFirmware, m.regions());
    EXPECT_EQ(img.entry(), SPU_IMEM_BASE);
    EXPECT_EQ(img.symbol("_start"), img.entry());
    EXPECT_TRUE(img.symbol("main").has_value());
    EXPECT_FALSE(img.symbol("tohost").has_value());
    const Bytes file = read(kFirmware);
    bool code = false, bss = false;
    for (const auto& s : img.segments()) {
        if (s.flags & PF_X) {
            code = true;
            EXPECT_EQ(s.region, "imem");
            // The code is the file's bytes: find the first word of the image in the file.
            const uint8_t* at = m.imem.data() + (s.paddr - SPU_IMEM_BASE);
            EXPECT_NE(std::search(file.begin(), file.end(), at, at + s.filesz), file.end());
        }
        if (s.filesz == 0) {
            bss = true;
            EXPECT_EQ(s.region, "dmem");
            for (uint32_t i = 0; i < s.memsz; ++i)
                ASSERT_EQ(m.dmem[s.paddr - SPU_DMEM_BASE + i], 0);
        }
    }
    EXPECT_TRUE(code);
    EXPECT_TRUE(bss);
}

TEST(CpuElf, MissingUnreadableEmptyAndNotElf) {
    TempDir dir;
    SpuMemories m;
    const std::string missing = dir.file("missing.elf");
    expect_error([&] { load_elf(missing, m.regions()); }, missing, {"cannot open", "No such file"});
    const std::string folder = dir.path().string();
    expect_error([&] { load_elf(folder, m.regions()); }, folder, {"directory"});
    const std::string empty = dir.write("empty.elf", "");
    expect_error([&] { load_elf(empty, m.regions()); }, empty, {"empty"});
    const std::string text = dir.write("text.elf", "#!/bin/sh\necho not an executable\n");
    expect_error([&] { load_elf(text, m.regions()); }, text, {"not an ELF file"});
    if (getuid() != 0) {  // root reads anything
        const std::string locked = dir.write("locked.elf", "x");
        chmod(locked.c_str(), 0);
        expect_error([&] { load_elf(locked, m.regions()); }, locked,
                     {"cannot open", "Permission denied"});
    }
}

TEST(CpuElf, WrongClassEncodingMachineAndType) {
    TempDir dir;
    SpuMemories m;
    const Bytes good = mini_elf(SPU_IMEM_BASE, Bytes(16, 0x13), 16);
    auto variant = [&](const std::string& name, auto change) {
        Bytes b = good;
        change(b);
        return write(dir, name, b);
    };
    const std::string c64 = variant("class64.elf", [](Bytes& b) { b[EI_CLASS] = ELFCLASS64; });
    expect_error([&] { load_elf(c64, m.regions()); }, c64, {"64-bit"});
    const std::string be = variant("big.elf", [](Bytes& b) { b[EI_DATA] = ELFDATA2MSB; });
    expect_error([&] { load_elf(be, m.regions()); }, be, {"big-endian"});
    const std::string x86 = variant("x86.elf", [](Bytes& b) { put<uint16_t>(b, 18, EM_X86_64); });
    expect_error([&] { load_elf(x86, m.regions()); }, x86, {"x86-64", "not RISC-V"});
    const std::string rel = variant("rel.elf", [](Bytes& b) { put<uint16_t>(b, 16, ET_REL); });
    expect_error([&] { load_elf(rel, m.regions()); }, rel, {"not an executable", "ET_REL"});
    const std::string dyn = variant("dyn.elf", [](Bytes& b) { put<uint16_t>(b, 16, ET_DYN); });
    expect_error([&] { load_elf(dyn, m.regions()); }, dyn, {"not an executable", "ET_DYN"});
    // A real 64-bit executable: this test program itself.
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    expect_error([&] { load_elf(self, m.regions()); }, self, {"64-bit"});
    EXPECT_EQ(m.imem[0], 0xa5);  // nothing written
}

TEST(CpuElf, TruncatedFiles) {
    TempDir dir;
    SpuMemories m;
    const Bytes good = mini_elf(SPU_IMEM_BASE, Bytes(64, 0x13), 64);
    auto cut = [&](const std::string& name, size_t n) {
        return write(dir, name, Bytes(good.begin(), good.begin() + n));
    };
    const std::string header = cut("header.elf", 30);
    expect_error([&] { load_elf(header, m.regions()); }, header,
                 {"truncated", "ELF header", "30 bytes"});
    const std::string phdrs = cut("phdrs.elf", sizeof(Elf32_Ehdr) + 10);
    expect_error([&] { load_elf(phdrs, m.regions()); }, phdrs, {"truncated", "program headers"});
    const std::string data = cut("data.elf", 0x100 + 20);
    expect_error([&] { load_elf(data, m.regions()); }, data, {"truncated", "segment 0"});
    const std::string shdrs = cut("shdrs.elf", good.size() - 8);
    expect_error([&] { load_elf(shdrs, m.regions()); }, shdrs, {"truncated", "section headers"});
    EXPECT_EQ(m.imem[0], 0xa5);
}

TEST(CpuElf, TruncatedAndAlteredFirmware) {
    NEED_FIRMWARE();
    TempDir dir;
    SpuMemories m;
    const Bytes fw = read(kFirmware);
    ASSERT_GT(fw.size(), 8192u);
    const std::string half = write(dir, "half.elf", Bytes(fw.begin(), fw.begin() + 6000));
    expect_error([&] { load_elf(half, m.regions()); }, half,
                 {"truncated", "segment", "6000 bytes"});
    Bytes arm = fw;
    put<uint16_t>(arm, 18, EM_ARM);
    const std::string arm_path = write(dir, "arm.elf", arm);
    expect_error([&] { load_elf(arm_path, m.regions()); }, arm_path, {"ARM", "not RISC-V"});
    EXPECT_EQ(m.imem[0], 0xa5);
    EXPECT_EQ(m.dmem[0], 0xa5);
}

std::string hex32(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

TEST(CpuElf, SegmentsMustFitARegion) {
    TempDir dir;
    Bytes imem(SPU_IMEM_SIZE, 0xa5);
    std::vector<LoadRegion> only_imem = {
        {"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE, imem.data(), nullptr}};
    // Wholly outside, and straddling the end of IMEM.
    const std::string far = write(dir, "far.elf", mini_elf(0x80000000u, Bytes(16, 0x13), 16));
    expect_error([&] { load_elf(far, only_imem); }, far,
                 {"segment [0x80000000, 0x80000010)", "outside memory",
                  "imem [0x00000000, " + hex32(SPU_IMEM_SIZE) + ")"});
    const std::string straddle =
        write(dir, "straddle.elf", mini_elf(SPU_IMEM_SIZE - 8, Bytes(16, 0x13), 16));
    expect_error(
        [&] { load_elf(straddle, only_imem); }, straddle,
        {"[" + hex32(SPU_IMEM_SIZE - 8) + ", " + hex32(SPU_IMEM_SIZE + 8) + ")", "outside memory"});
    // Only the memory size overflows: the zero-fill must fit too.
    const std::string bss =
        write(dir, "bss.elf", mini_elf(SPU_IMEM_SIZE - 16, Bytes(16, 0x13), 4096));
    expect_error([&] { load_elf(bss, only_imem); }, bss, {"outside memory"});
    EXPECT_EQ(imem[SPU_IMEM_SIZE - 16], 0xa5);  // nothing written
    // Firmware whose data segments have no DMEM to go to.
#ifdef CANOPY_FIRMWARE_DIR
    expect_error([&] { load_elf(kFirmware, only_imem); }, kFirmware,
                 {"[0x00010", "outside memory", "imem"});
#endif
}

TEST(CpuElf, MalformedSegmentsAndEntry) {
    TempDir dir;
    Bytes ram(4096, 0xa5);
    std::vector<LoadRegion> regions = {{"ram", 0x80000000u, ram.size(), ram.data(), nullptr}};
    Bytes b = mini_elf(0x80000000u, Bytes(16, 0x13), 8);  // memsz < filesz
    const std::string small = write(dir, "memsz.elf", b);
    expect_error([&] { load_elf(small, regions); }, small, {"file size 16 exceeds memory size 8"});
    b = mini_elf(0x80000000u, Bytes(16, 0x13), 16);
    put<uint32_t>(b, 24, 0x90000000u);  // e_entry
    const std::string entry = write(dir, "entry.elf", b);
    expect_error([&] { load_elf(entry, regions); }, entry,
                 {"entry point 0x90000000", "outside memory"});
    b = mini_elf(0x80000000u, Bytes(16, 0x13), 16);
    put<uint32_t>(b, sizeof(Elf32_Ehdr), PT_NOTE);  // the only program header is not PT_LOAD
    const std::string none = write(dir, "noload.elf", b);
    expect_error([&] { load_elf(none, regions); }, none, {"no loadable segment"});
    EXPECT_EQ(ram[0], 0xa5);
}
