// Text from plugins: made valid UTF-8 for JSON, escaped for names, tamed for the terminal.
#include "text.h"

#include <gtest/gtest.h>

namespace allocbench {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Text, ValidUtf8ReplacesEveryInvalidByteAndKeepsTheRest) {
  EXPECT_EQ(ValidUtf8("caf\xc3\xa9 \xf0\x9f\x9f\xa5"), "caf\xc3\xa9 \xf0\x9f\x9f\xa5");
  EXPECT_EQ(ValidUtf8("caf\xe9!"), "caf" + kFffd + "!");                    // Latin-1 é
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), kFffd + kFffd);                          // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), kFffd + kFffd + kFffd);              // a UTF-16 surrogate
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // above U+10FFFF
  EXPECT_EQ(ValidUtf8("ab\xe2\x82"), "ab" + kFffd + kFffd);                 // cut short
  EXPECT_EQ(ValidUtf8("tab\there\n"), "tab\there\n");  // controls are valid UTF-8
  EXPECT_EQ(ValidUtf8("del\x7f"), "del\x7f");          // the last ASCII byte, DEL, too
}

TEST(Text, EscapedIsPrintableAndTellsInputsApart) {
  EXPECT_EQ(Escaped("span/web:1"), "span/web:1");
  EXPECT_EQ(Escaped("a\nb\x1b[31m"), "a\\x0ab\\x1b[31m");
  EXPECT_EQ(Escaped("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(Escaped("\xc2\x85"), "\\x85");  // C1 control NEL
  EXPECT_EQ(Escaped("\x7f"), "\\x7f");
  EXPECT_EQ(Escaped("\\x0a"), "\\\\x0a");  // a literal backslash cannot pass for an escape
  EXPECT_NE(Escaped("\\x0a"), Escaped("\n"));
  EXPECT_EQ(Escaped("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(Text, PrintableProblemSaysWhat) {
  EXPECT_EQ(PrintableProblem("span_creation/web_server/dense:1"), "");
  EXPECT_EQ(PrintableProblem("caf\xc3\xa9 | </details> `x`"), "");
  EXPECT_EQ(PrintableProblem("a\xff"), "is not valid UTF-8");
  EXPECT_EQ(PrintableProblem("a\tb"), "has a control character");
  EXPECT_EQ(PrintableProblem("a\x7f"), "has a control character");
  EXPECT_EQ(PrintableProblem("a\xff\n"), "is not valid UTF-8");
}

TEST(Text, ForTerminalKeepsLinesAndNothingElseThatControls) {
  EXPECT_EQ(ForTerminal("one\ntwo"), "one\ntwo");
  EXPECT_EQ(ForTerminal("\x1b]0;title\x07\r"), "\\x1b]0;title\\x07\\x0d");
  EXPECT_EQ(ForTerminal("bad\xff"), "bad" + kFffd);
  EXPECT_EQ(ForTerminal("del\x7f"), "del\\x7f");
  EXPECT_EQ(ForTerminal("\xc2\x9b"
                        "31m"),
            "\\x9b31m");  // C1 CSI
}

}  // namespace
}  // namespace allocbench
