#include "topology/document/outcome.hpp"

namespace memtopo::host {

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::NotDeterminable: return "not_determinable";
    default: return "skipped";
  }
}

bool keeps_results(Status s) { return s == Status::Ok || s == Status::NotDeterminable; }

}  // namespace memtopo::host
