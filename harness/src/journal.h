// FILE.partial, the progress of a run: one line per instance measured, appended as it ends, so
// that a run killed or crashed at any point keeps every instance it measured, and each instance
// costs the bytes of its own entry (a rewrite of the whole document after each one cost the
// square of the run's length: 2,000 instances wrote gigabytes).
//
// The first line is the results document without results ("complete": false) with
// "journal": true; each line after it is one entry of its results (results_json.h). A line
// goes out in one write() and is synced; a run killed in the middle of one leaves it without
// its newline, and readers drop that line (ReadResults, and the Python side's results.load).
#ifndef ALLOCBENCH_HARNESS_JOURNAL_H_
#define ALLOCBENCH_HARNESS_JOURNAL_H_

#include <nlohmann/json.hpp>
#include <string>

namespace allocbench {

class Journal {
 public:
  // The first line of a journal of another kind of document: that document without results.
  struct Header {
    nlohmann::json document;
  };
  // Nothing is written until the first Append(); an empty `path` writes nothing at all.
  Journal(std::string path, nlohmann::json context);
  Journal(std::string path, Header header);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Adds one entry; the file is created (atomically, with its first line) by the first one.
  // UserError, naming the file, if it cannot be written.
  void Append(const nlohmann::json& result);
  // Deletes the file: the complete results are written.
  void Remove();

 private:
  std::string path_;
  nlohmann::json header_;
  int fd_ = -1;
  off_t size_ = 0;
};

// The results document at `path`, written whole or as a journal (then with the entries of its
// whole lines); null if there is none there or it is not one.
nlohmann::json ReadResults(const std::string& path);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_JOURNAL_H_
