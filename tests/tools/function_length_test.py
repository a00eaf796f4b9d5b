#!/usr/bin/env python3
"""Tiny inputs for tools/function_length.py, with hand-counted lengths (signature line to closing brace)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import function_length  # noqa: E402


def lengths(source):
    return [(name, last - first + 1) for first, last, name in function_length.functions(source)]


class FunctionLengthTest(unittest.TestCase):
    def test_free_functions_and_members(self):
        src = (
            "namespace a {\n"                 # 1
            "int f(int x) {\n"                 # 2  f: lines 2-4 = 3
            "    return x;\n"
            "}\n"
            "struct S {\n"                     # 5
            "    int g() const { return 1; }\n"  # 6  g: 1 line
            "  public:\n"
            "    S(int v)\n"                   # 8  S: lines 8-10 = 3
            "        : v_(v) {\n"
            "    }\n"
            "    int v_;\n"
            "};\n"
            "}  // namespace a\n"
            "void S::h() noexcept {}\n"        # 14 S::h: 1 line
        )
        self.assertEqual(lengths(src), [("f", 3), ("g", 1), ("S", 3), ("S::h", 1)])

    def test_braces_in_literals_comments_lambdas_and_initializers(self):
        src = (
            "const int table[] = {1, 2, 3};\n"          # an initializer, not a function
            "#define OPEN {\n"                           # a macro's brace opens nothing
            "int f() {\n"                                # 3  f: lines 3-11 = 9
            "    const char* s = \"{{\";  // }\n"
            "    char c = '}';\n"
            "    /* { */\n"
            "    auto raw = R\"x(} { \")x\";\n"
            "    auto g = [](int y) { return y; };\n"    # a lambda belongs to f
            "    if (c) { return 1; }\n"
            "    return g(1'000);\n"
            "}\n"
        )
        self.assertEqual(lengths(src), [("f", 9)])

    def test_limit(self):
        body = "".join("    x += %d;\n" % i for i in range(148))
        at_limit = "int at_limit(int x) {\n" + body + "}\n"          # 150 lines
        over = "int over_limit(int x) {\n" + body + "    x += 1;\n}\n"  # 151 lines
        self.assertEqual(lengths(at_limit + over), [("at_limit", 150), ("over_limit", 151)])
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "function_length_test_%d.cpp" % os.getpid())
        with open(path, "w") as f:
            f.write(at_limit + over)
        try:
            self.assertEqual(function_length.main(["--max", "150", path]), 1)
            self.assertEqual(function_length.main(["--max", "151", path]), 0)
        finally:
            os.remove(path)


if __name__ == "__main__":
    unittest.main()
