// A subject library whose two builds share the soname libpaired_subject.so and differ in the
// work their one function asks for: loaded into one process, the second plugin would get the
// first one's (test_paired_pass.py).
#ifndef PAIRED_SUBJECT_WORK
#error "define PAIRED_SUBJECT_WORK"
#endif

extern "C" __attribute__((visibility("default"))) int paired_subject_work() {
  return PAIRED_SUBJECT_WORK;
}
