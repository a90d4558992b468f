// Text that crosses from a plugin into the results and onto the terminal. A plugin may hand us
// any bytes (a name with a newline, an exception text in Latin-1); JSON needs valid UTF-8, and a
// terminal must never receive control characters it would obey.
#ifndef ALLOCBENCH_HARNESS_TEXT_H_
#define ALLOCBENCH_HARNESS_TEXT_H_

#include <string>

namespace allocbench {

// `text` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(const std::string& text);

// `text` made printable and injective: invalid UTF-8 bytes and control characters (C0, DEL,
// C1) become `\xNN`, a backslash becomes `\\`; printable text, UTF-8 included, is kept.
std::string Escaped(const std::string& text);

// Empty when `text` is valid UTF-8 without control characters; otherwise what is wrong with it
// ("is not valid UTF-8", "has a control character").
std::string PrintableProblem(const std::string& text);

// For the terminal: control characters as `\xNN` (newlines kept), invalid UTF-8 as U+FFFD.
std::string ForTerminal(const std::string& text);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_TEXT_H_
