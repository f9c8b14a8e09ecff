// Per-ISA kernel files are compiled once per instruction set (see CMakeLists.txt), with
// NUMR_ISA naming the namespace (avx512, avx2, sse4) and NUMR_ISA_TARGET the GCC target.
// Each such file includes every system and standard header first, then this header,
// which switches the target on for the rest of the file. Standard-library templates are
// thus compiled for the baseline target wherever they are instantiated, and only numr's
// own kernel code (in namespace numr::cpu::NUMR_ISA) uses the wider instructions.
#ifndef NUMR_ISA
#error "NUMR_ISA must name the instruction set this file is compiled for"
#endif
#ifndef NUMR_ISA_ACTIVE
#define NUMR_ISA_ACTIVE 1
#define NUMR_PRAGMA(x) _Pragma(#x)
#define NUMR_TARGET_PRAGMA(t) NUMR_PRAGMA(GCC target(t))
#pragma GCC push_options
NUMR_TARGET_PRAGMA(NUMR_ISA_TARGET)
// GCC 12's AVX-512 intrinsics (conversions, unpacks) start from an intentionally undefined
// register, which -Wmaybe-uninitialized, and in the sanitizer build -Wuninitialized,
// report inside the system header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
