// MMPI_VECTOR_CLONES: for the few loops over whole messages (byte swaps,
// reductions) that vector units speed up, a function attribute that has the
// compiler build them twice, for AVX2 and for the baseline, chosen when the
// library loads; nothing where the platform cannot (no glibc ifuncs) and
// with Clang, which refuses target_clones together with flatten.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(__ANDROID__) && defined(__has_attribute)
#if __has_attribute(target_clones)
// flatten: what the loop calls is compiled into each clone, for its CPU.
#define MMPI_VECTOR_CLONES __attribute__((target_clones("avx2", "default"), flatten))
#endif
#endif
#ifndef MMPI_VECTOR_CLONES
#define MMPI_VECTOR_CLONES
#endif
