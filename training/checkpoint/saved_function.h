// Calling a TF2 SavedModel's functions by object path, as `obj.f(x)` after
// tf.saved_model.load in Python: not only its signatures but every
// tf.function (and concrete function) tf.saved_model.save recorded in the
// object graph.
//
//   ASSIGN_OR_RETURN(SavedModelBundle model, LoadSavedModel(config, dir, {"serve"}));
//   SavedFunctions functions(&model);
//   ASSIGN_OR_RETURN(auto out, functions.Call("encoder.embed", {{"x", batch}}));
//   // out[0] = {"output", embedding} for a function that returns one tensor
//
// The path is the child names from the root object joined by '.'; it must
// lead to a function (one of its traces is called) or a bare concrete
// function. Inputs are given by the names of the trace's TensorSpecs (the
// Python argument names: "x"), each with the spec's dtype and a compatible
// shape. Of a function's traces the one whose tensor arguments are exactly
// the given names with fitting dtypes and shapes is called; arguments that
// were Python constants when it was traced (training=True) are fixed by
// the trace, so when more than one trace fits, InvalidArgument lists them.
// Results come in the function's order (TensorFlow's nest.flatten: dict
// keys sorted), each with its path in the returned structure: dict keys and
// tuple or list indexes joined by '/', "output" when the function returns
// one tensor.
//
// What a trace captures: a variable that a signature also captures is the
// same variable (the signature's handle), so state such as a step counter
// is shared; any other variable gets a handle of its own, restored from
// variables/variables when a trace first uses it and shared by every later
// call. A captured constant is the graph's Const. Traces that capture
// resources (lookup tables) or assets, or take composite tensors (ragged,
// sparse), are refused with Unimplemented naming them.
//
// Each trace is added to the bundle's session once (Session::Extend: a
// StatefulPartitionedCall fed by placeholders) and later calls run it.
//
// Errors: FailedPrecondition for a SavedModel without an object graph (TF1);
// NotFound for a path that leads nowhere (naming the missing child and
// listing those there) or to an object that is not a function;
// InvalidArgument when no trace (or more than one) fits the inputs, naming
// each trace's arguments; the session's errors with the path named.
// Thread-safe; the bundle must outlive this object.
#ifndef SLUICE_TRAINING_CHECKPOINT_SAVED_FUNCTION_H_
#define SLUICE_TRAINING_CHECKPOINT_SAVED_FUNCTION_H_

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/tensor.h"
#include "training/checkpoint/saved_model.h"

namespace sluice {

class SavedFunctions {
 public:
  explicit SavedFunctions(SavedModelBundle* bundle);

  SavedFunctions(const SavedFunctions&) = delete;
  SavedFunctions& operator=(const SavedFunctions&) = delete;

  // The paths of the functions Call takes, sorted; not the signatures
  // (RunSignature calls those), nor paths through names starting with '_'
  // (private in Python: a table's _initialize).
  std::vector<std::string> Paths() const;

  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Call(
      const std::string& path, const std::map<std::string, Tensor>& inputs);

 private:
  // A trace added to the session: what to feed and fetch.
  struct AddedCall {
    std::map<std::string, std::string> feeds;  // input name -> placeholder tensor
    std::vector<std::string> fetches;
    std::vector<std::string> output_paths;
    std::string target;  // the call node, run when there is nothing to fetch
  };

  absl::StatusOr<const AddedCall*> AddCall(const std::string& path, const std::string& function)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The input a trace's call passes for a captured object; a variable
  // without a handle yet gets one named under `scope`, added to `fragment`.
  absl::StatusOr<std::string> CapturedInput(const std::string& path, int object,
                                            const std::string& scope,
                                            std::vector<std::string>* new_handles,
                                            ::tensorflow::GraphDef* fragment)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string FreshScope() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SavedModelBundle* const bundle_;
  absl::Mutex mu_;
  std::map<std::string, AddedCall> calls_ ABSL_GUARDED_BY(mu_);  // by concrete function
  // Saved object id -> the handle tensor its variable is read through.
  std::map<int, std::string> handles_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> node_names_ ABSL_GUARDED_BY(mu_);  // the session graph's
  int scopes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_SAVED_FUNCTION_H_
