# SSD Apps for SPU-OS (Willow Section 3.1 "Building an SSD App"), in the tree and out of it: the
# firmware build (sw/firmware/CMakeLists.txt) and the installed SDK (find_package(Canopy) in a
# project cross-compiled with toolchain-rv32.cmake, docs/sdk.md) both build apps with this file.
# Before including it, set CANOPY_SPU_INCLUDE_DIRS (where spu_app.h and spu_os_abi.h are),
# CANOPY_SPU_APP_LD_IN (app.ld.in) and CANOPY_SPU_APP_RT (app_rt.c).
include_guard(GLOBAL)

# read_hex_defines(HEADER PATTERN): sets a CMake variable for every `#define NAME 0x...u` (or
# decimal) of HEADER whose NAME matches PATTERN, so that a C header stays the one source of a
# layout.
macro(read_hex_defines header pattern)
  file(STRINGS ${header} _lines REGEX "^#define ${pattern} +(0x[0-9a-fA-F]+|[0-9]+)u?")
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "^#define ([A-Z0-9_]+) +(0x[0-9a-fA-F]+|[0-9]+)u?.*$" "\\1;\\2" _kv "${_line}")
    list(GET _kv 0 _key)
    list(GET _kv 1 _value)
    set(${_key} ${_value})
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
endmacro()

# canopy_spu_app(NAME SLOT K SOURCES file.c ...): NAME.elf, an SSD App linked for SPU-OS's slot K
# (the slots' layout comes from spu_os_abi.h); `canopy run --app NAME=NAME.elf` installs it there.
# C without the standard library, static memory only; the runtime (app_rt.c) is compiled in.
function(canopy_spu_app name)
  cmake_parse_arguments(A "" "SLOT" "SOURCES" ${ARGN})
  if(NOT DEFINED A_SLOT OR NOT A_SOURCES)
    message(FATAL_ERROR "canopy_spu_app(${name} SLOT K SOURCES ...): SLOT and SOURCES are needed")
  endif()
  set(abi "")
  foreach(dir IN LISTS CANOPY_SPU_INCLUDE_DIRS)
    if(EXISTS ${dir}/spu_os_abi.h)
      set(abi ${dir}/spu_os_abi.h)
    endif()
  endforeach()
  if(NOT abi)
    message(FATAL_ERROR "canopy_spu_app: no spu_os_abi.h in CANOPY_SPU_INCLUDE_DIRS (${CANOPY_SPU_INCLUDE_DIRS})")
  endif()
  read_hex_defines(${abi} "SPU_OS_[A-Z0-9_]+")
  if(NOT A_SLOT MATCHES "^[0-9]+$" OR A_SLOT GREATER_EQUAL ${SPU_OS_SLOTS})
    math(EXPR last "${SPU_OS_SLOTS} - 1")
    message(FATAL_ERROR "canopy_spu_app(${name}): SLOT ${A_SLOT} is not one of SPU-OS's slots 0..${last}")
  endif()
  math(EXPR APP_CODE_BASE "${SPU_OS_CODE_SLOT_BASE} + ${A_SLOT} * ${SPU_OS_CODE_SLOT_SIZE}"
       OUTPUT_FORMAT HEXADECIMAL)
  math(EXPR APP_DATA_BASE "${SPU_OS_DATA_SLOT_BASE} + ${A_SLOT} * ${SPU_OS_DATA_SLOT_SIZE}"
       OUTPUT_FORMAT HEXADECIMAL)
  set(APP_CODE_SIZE ${SPU_OS_CODE_SLOT_SIZE})
  set(APP_DATA_SIZE ${SPU_OS_DATA_SLOT_SIZE})
  math(EXPR APP_STACK_RESERVE "${SPU_OS_APP_STACK_SIZE} + ${SPU_OS_HEADER_AREA}"
       OUTPUT_FORMAT HEXADECIMAL)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/app_slot${A_SLOT}.ld)
  configure_file(${CANOPY_SPU_APP_LD_IN} ${script} @ONLY)
  add_executable(${name} ${A_SOURCES} ${CANOPY_SPU_APP_RT})
  target_include_directories(${name} PRIVATE ${CANOPY_SPU_INCLUDE_DIRS})
  # -g whatever the build type: `canopy run --gdb` debugs apps with their symbols.
  target_compile_options(${name} PRIVATE -ffreestanding -g)
  # -n: no page alignment, so that the loadable segment starts at the slot.
  target_link_options(${name} PRIVATE -nostdlib -n -T${script} -Wl,-Map=${name}.map)
  target_link_libraries(${name} PRIVATE gcc)
  set_target_properties(${name} PROPERTIES SUFFIX .elf LINK_DEPENDS ${script})
endfunction()
