import os
import subprocess
import sys
import unittest

import util  # noqa: F401 (puts the package of this checkout on sys.path)
import dinput

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(code, **env):
    e = dict(os.environ, PYTHONPATH=PKG)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True)


class PackageTest(unittest.TestCase):
    def test_version_and_library(self):
        self.assertRegex(dinput.__version__, r"^\d+\.\d+\.\d+")
        self.assertTrue(os.path.exists(dinput.library_path) or "/" not in dinput.library_path)
        self.assertIsInstance(dinput.build_info(), dict)

    def test_torch_is_not_imported(self):
        r = run("import sys, dinput; list(dinput.Dataset.range(3)); "
                "print('torch' in sys.modules)")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "False")

    def test_dinput_library_variable(self):
        r = run("import dinput; print(dinput.library_path)", DINPUT_LIBRARY=dinput.library_path)
        self.assertEqual(r.stdout.strip(), dinput.library_path, r.stderr)
        r = run("import dinput", DINPUT_LIBRARY="/nonexistent/libdinput.so.0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("/nonexistent/libdinput.so.0", r.stderr)

    def test_exit_with_running_callbacks(self):
        # Iterators still producing through Python callbacks at exit: the process must end
        # normally (dinput's threads must not enter a finalizing interpreter).
        code = ("import dinput\n"
                "ds = dinput.Dataset.range(10**9).map(lambda x: x + 1, num_parallel_calls=4)"
                ".prefetch(8)\n"
                "it = iter(ds); print(int(next(it)))\n"
                "dd = dinput.Strategy(['CPU:0', 'CPU:1']).distribute_dataset(ds.batch(4))\n"
                "it2 = iter(dd); print(len(next(it2)))\n")
        for _ in range(3):
            r = run(code)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["1", "2"])

    def test_source_tree_library(self):
        # Without DINPUT_LIBRARY, a checkout finds the library of its own build directory.
        env = dict(os.environ)
        env.pop("DINPUT_LIBRARY", None)
        env["PYTHONPATH"] = PKG
        r = subprocess.run([sys.executable, "-c", "import dinput; print(dinput.library_path)"],
                           env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        root = os.path.dirname(os.path.dirname(PKG))
        if os.path.isfile(os.path.join(root, "build", "src", "libdinput.so.0")):
            self.assertTrue(r.stdout.strip().startswith(root), r.stdout)


if __name__ == "__main__":
    unittest.main()
