# CMake toolchain for SPU firmware: Debian's gcc-riscv64-unknown-elf with picolibc, for an
# RV32IMC + Zicsr hart in machine mode (models/cpu/rv32_core.hpp), ilp32 soft-float ABI. C
# (16-bit instructions) makes code about 30% smaller: SPU-OS and the apps fill fixed IMEM slots.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CANOPY_RISCV_PREFIX riscv64-unknown-elf- CACHE STRING "prefix of the RISC-V cross tools")
find_program(CMAKE_C_COMPILER ${CANOPY_RISCV_PREFIX}gcc REQUIRED)
set(CMAKE_ASM_COMPILER ${CMAKE_C_COMPILER})
find_program(CMAKE_OBJDUMP ${CANOPY_RISCV_PREFIX}objdump)
find_program(CMAKE_SIZE ${CANOPY_RISCV_PREFIX}size)

set(CANOPY_RV32_ARCH "-march=rv32imc_zicsr -mabi=ilp32")
set(CMAKE_C_FLAGS_INIT "${CANOPY_RV32_ARCH} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${CANOPY_RV32_ARCH}")
# GCC 12 picks a multilib by the literal -march string and does not know that rv32imc_zicsr is
# rv32imc plus an extension the libraries never use: it would fall back to the rv64 default, and
# Debian has no rv32imc multilib (rv32imac's would need the A extension, which the core lacks).
# The last -march on the link line chooses the rv32im/ilp32 picolibc and libgcc: 32-bit code,
# which the core runs as well.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-march=rv32im -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
