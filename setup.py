"""The one thing pyproject.toml cannot declare: the optional C extension of the search kernels,
the pruned top-k traversal and the word-order bonus's pair counts (bot/search/ranking/csrc/).
`pip install .` compiles it where a C compiler and Python's headers are present; where not,
the install still succeeds (`optional=True`) and queries take numpy's versions, with the same
answers (bot/search/ranking/kernel.py says which)."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Scores must match the exhaustive path to the bit: no fused multiply-add, no fast-math.
FLAGS = {
    "msvc": ["/O2", "/fp:precise"],
    "unix": ["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99"],
}


class BuildExt(build_ext):
    """Compiler flags by compiler family (MSVC spells them differently)."""

    def build_extensions(self) -> None:
        flags = FLAGS.get(self.compiler.compiler_type, FLAGS["unix"])
        for extension in self.extensions:
            extension.extra_compile_args = flags
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "bot.search.ranking._kernel",
            [
                "bot/search/ranking/csrc/module.c",
                "bot/search/ranking/csrc/topk.c",
                "bot/search/ranking/csrc/pairs.c",
            ],
            depends=["bot/search/ranking/csrc/common.h"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
