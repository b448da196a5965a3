// An ELF file given to `canopy iss --elf` or installed as firmware (models/cpu/elf_loader.cpp):
// checked, then loaded into the SPU's IMEM and DMEM and a RAM as `canopy iss` maps them.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cpu/elf_loader.hpp"
#include "cpu/spu_map.h"
#include "fuzz.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The loader reads a file: one per process, rewritten for every input, removed at exit.
    struct InputFile {
        std::string path = (std::filesystem::temp_directory_path() /
                            ("canopy-fuzz-elf-" + std::to_string(getpid())))
                               .string();
        ~InputFile() { std::remove(path.c_str()); }
    };
    static const InputFile file;
    const std::string& path = file.path;
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    static std::vector<uint8_t> imem(SPU_IMEM_SIZE), dmem(SPU_DMEM_SIZE), ram(1 << 20);
    fuzz::refused_only_as_input_error([&] {
        cpu::ElfImage image(path);
        image.load({{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE, imem.data(), nullptr},
                    {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE, dmem.data(), nullptr},
                    {"ram", 0x80000000u, uint32_t(ram.size()), ram.data(), nullptr}});
        image.symbol("tohost");
    });
    return 0;
}
