// The cores this process may compute on, and whether it has the machine to
// itself.
//
//   const int threads = ProcessCpuShare();   // default size of CPU pools
//   if (SharesTheMachine()) ...              // other processes compute too
//
// A launcher that starts several tasks on one machine gives each a share in
// $SLUICE_NUM_THREADS (distributed/cluster/launcher.h), and so does a sweep
// for each trial. Thread-safe; the environment is read on every call.
#ifndef SLUICE_RUNTIME_CPU_SHARE_H_
#define SLUICE_RUNTIME_CPU_SHARE_H_

namespace sluice {

// The environment variable holding a process's share of the cores.
inline constexpr char kNumThreadsEnv[] = "SLUICE_NUM_THREADS";

// The machine's hardware threads (at least 1).
int HardwareThreads();

// $SLUICE_NUM_THREADS when it is a positive number, else HardwareThreads().
int ProcessCpuShare();

// The share is less than the machine: other processes compute on the rest,
// so a thread with nothing to do should sleep rather than spin.
bool SharesTheMachine();

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CPU_SHARE_H_
