# One copy of XNNPACK, pthreadpool and cpuinfo in a process with LibTorch
# (scripts/build_xnnpack.sh renames ours to tracegraph_*):
#   - PROGRAMS ('|'-separated): no undefined dynamic symbol of theirs, which
#     the dynamic linker would bind to libtorch_cpu.so's copy of that name;
#   - OBJECTS (the XNNPACK backend's object files): those compiled for AVX2 or
#     AVX-512 (table_avx2, table_avx512) define one global symbol each,
#     their kernel table, and no weak (inline, template) one that the linker
#     could keep for a caller on a CPU without those instructions.
# cmake -DPROGRAMS=a|b -DOBJECTS=x.o|y.o -P one_copy_symbols.cmake
find_program(NM nm REQUIRED)
set(problems "")

string(REPLACE "|" ";" programs "${PROGRAMS}")
foreach(program IN LISTS programs)
  execute_process(COMMAND ${NM} -D --undefined-only ${program} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(APPEND problems "nm -D failed on ${program}\n")
    continue()
  endif()
  string(REGEX MATCHALL "[ \t](xnn_|pthreadpool_|cpuinfo_)[A-Za-z0-9_]*" found "${out}")
  list(LENGTH found count)
  message(STATUS "${program}: ${count} undefined XNNPACK, pthreadpool or cpuinfo symbols")
  foreach(symbol IN LISTS found)
    string(STRIP "${symbol}" symbol)
    string(APPEND problems "${program} leaves ${symbol} to the dynamic linker (LibTorch has a symbol of that name)\n")
  endforeach()
endforeach()

string(REPLACE "|" ";" objects "${OBJECTS}")
set(wide 0)
foreach(object IN LISTS objects)
  if(NOT object MATCHES "table_avx(2|512)\\.cpp\\.o$")
    continue()
  endif()
  math(EXPR wide "${wide} + 1")
  execute_process(COMMAND ${NM} -g --defined-only -C ${object} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(APPEND problems "nm failed on ${object}\n")
    continue()
  endif()
  string(REGEX REPLACE "\n$" "" out "${out}")
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "conv::avx(2|512)_kernels\\(\\)$")
      string(APPEND problems "${object} defines '${line}': code built for wider instructions that others may call\n")
    endif()
  endforeach()
endforeach()
if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT wide EQUAL 2)
  string(APPEND problems "expected the two wide objects (table_avx2, table_avx512) among OBJECTS, found ${wide}\n")
endif()

if(problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "one copy: every program binds XNNPACK, pthreadpool and cpuinfo in its own image; the wide objects export only their kernel tables")
