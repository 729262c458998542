// ThreadSpare<Kind>: one freed block per thread for each kind of
// fixed-size block, kept for the thread's next block of that kind, without
// a lock or an atomic operation.
//
//   struct SmallBlock {
//     static void Free(void* p) { std::free(p); }
//   };
//   void* p = ThreadSpare<SmallBlock>::Take();           // null when none
//   if (p == nullptr) p = std::malloc(kSmallBytes);
//   ...
//   if (!ThreadSpare<SmallBlock>::Keep(p)) SmallBlock::Free(p);
//
// Why: a tensor allocated and freed once per step, per kernel output or per
// small RecvTensor otherwise pays glibc's malloc and free (with their
// checks, about 130 instructions) or a shared cache's atomics for each of
// its blocks; the small RecvTensor's round trip is mostly such fixed costs.
// One slot rather than a cache, so no thread holds more than one block of a
// kind. A block may be freed on another thread than the one that took it.
//
// The slot is trivially destructible, so it serves until its thread ends;
// the block in it then goes to Kind::Free (from the first Keep on, a
// thread-exit handler is registered). Keep refuses blocks once that handler
// has run.
#ifndef SLUICE_RUNTIME_THREAD_SPARE_H_
#define SLUICE_RUNTIME_THREAD_SPARE_H_

namespace sluice {

template <typename Kind>
class ThreadSpare {
 public:
  // This thread's spare block (taken), or null.
  static void* Take() {
    void*& slot = Slot();
    void* p = slot;
    slot = nullptr;
    return p;
  }

  // True when `p` became this thread's spare; false when there is one
  // already (or the thread is ending): the caller frees `p`.
  static bool Keep(void* p) {
    void*& slot = Slot();
    if (slot != nullptr || Ending()) return false;
    slot = p;
    FreeAtThreadExit();
    return true;
  }

 private:
  struct Reaper {
    ~Reaper() {
      Ending() = true;
      if (Slot() != nullptr) Kind::Free(Slot());
      Slot() = nullptr;
    }
  };
  static void*& Slot() {
    thread_local void* slot = nullptr;
    return slot;
  }
  static bool& Ending() {
    thread_local bool ending = false;
    return ending;
  }
  static void FreeAtThreadExit() {
    thread_local Reaper reaper;  // constructed, and its exit registered, once per thread
    static_cast<void>(reaper);
  }
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_THREAD_SPARE_H_
