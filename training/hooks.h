// The training loop's standard hooks (training/monitored_session.h),
// one header each, all included here:
//
//   StopAtStepHook stop(/*last_step=*/1000, "global_step:0");
//   CheckpointSaverHook ckpt(&saver, "/tmp/train", "global_step:0", {.every_steps = 100});
//   LoggingHook log("global_step:0", "loss:0", /*every_steps=*/50, &std::cout);
//   NanTensorHook nan("loss:0");
//   SummarySaverHook summaries("summaries/merged:0", writer.get(), "global_step:0", 100);
//
// Thread-compatible; the saver, writer and stream are borrowed.
#ifndef SLUICE_TRAINING_HOOKS_H_
#define SLUICE_TRAINING_HOOKS_H_

#include "training/checkpoint_saver_hook.h"  // IWYU pragma: export
#include "training/logging_hook.h"           // IWYU pragma: export
#include "training/nan_tensor_hook.h"        // IWYU pragma: export
#include "training/stop_at_step_hook.h"      // IWYU pragma: export
#include "training/summary_saver_hook.h"     // IWYU pragma: export

#endif  // SLUICE_TRAINING_HOOKS_H_
