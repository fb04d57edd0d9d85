#!/usr/bin/python3
"""ctest cases for tools/torch-import: import models, read the text back with dpl-opt, count ops, evaluate it."""

import argparse
import collections
import os
import re
import subprocess
import sys

import numpy
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
# The importer and models.py are imported from the source tree, which must not collect __pycache__ directories.
sys.dont_write_bytecode = True
NO_BYTECODE = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")


class Context:
    def __init__(self, args):
        self.dpl_opt = args.dpl_opt
        self.eval = args.eval
        self.importer_dir = args.importer_dir
        self.work_dir = args.work_dir
        os.makedirs(self.work_dir, exist_ok=True)

    def path(self, name):
        return os.path.join(self.work_dir, name)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def run(command):
    return subprocess.run(command, capture_output=True, text=True, check=False, env=NO_BYTECODE)


def read_back(ctx, text, name):
    """dpl-opt reads (and type-checks) `text`; returns dpl-opt's own printing of it, which the counts look at."""
    source = ctx.path(f"{name}.relax")
    with open(source, "w", encoding="utf-8") as out:
        out.write(text)
    result = run([ctx.dpl_opt, source, "-o", ctx.path(f"{name}.printed.relax")])
    check(result.returncode == 0, f"dpl-opt cannot read {source}:\n{result.stderr}")
    with open(ctx.path(f"{name}.printed.relax"), encoding="utf-8") as printed:
        return source, printed.read()


def op_counts(text):
    """Calls per op (`R.nn.conv2d`: 20) and tuple items (`[]`) in the bindings of printed TVMScript."""
    counts = collections.Counter(re.findall(r" = (R\.[A-Za-z_.0-9]+)\(", text))
    counts["[]"] = len(re.findall(r" = [A-Za-z_][A-Za-z_0-9]*\[\d+\]$", text, re.MULTILINE))
    return counts


def check_counts(text, expected, what):
    counts = op_counts(text)
    for op, count in expected.items():
        check(counts[op] == count, f"{what}: expected {count} x {op}, found {counts[op]} (all: {dict(counts)})")
    unexpected = {op: count for op, count in counts.items() if count and op not in expected}
    check(not unexpected, f"{what}: unexpected ops {unexpected}")


def check_against_torch(ctx, model, inputs, imported, source, name, tolerance):
    """The reference interpreter on the imported text agrees with PyTorch on the same inputs and weights."""
    tensors = dict(model.named_parameters())
    tensors.update(model.named_buffers())
    args = list(inputs) + [tensors[weight] for weight in imported.weight_names]
    args_path, out_path = ctx.path(f"{name}.args.bin"), ctx.path(f"{name}.out.bin")
    with open(args_path, "wb") as out:
        for arg in args:
            out.write(arg.detach().to(torch.float32).contiguous().numpy().tobytes())
    result = run([ctx.eval, source, args_path, out_path])
    check(result.returncode == 0, f"the interpreter cannot evaluate {source}:\n{result.stderr}")
    with torch.no_grad():
        expected = model(*inputs).numpy().ravel()
    actual = numpy.fromfile(out_path, dtype=numpy.float32)
    check(actual.shape == expected.shape, f"{name}: {actual.shape[0]} values, torch has {expected.shape[0]}")
    error = numpy.abs(actual - expected) / (1.0 + numpy.abs(expected))
    check(float(error.max()) <= tolerance,
          f"{name}: interpreter and torch differ by {float(error.max()):.3g} (relative) at element "
          f"{int(error.argmax())}: {actual[error.argmax()]} vs {expected[error.argmax()]}")
    check(float(numpy.abs(expected).max()) > 0, f"{name}: torch's output is all zeros; the comparison is vacuous")


def import_and_check(ctx, importer, model, inputs, name, expected_counts, tolerance=1e-4):
    imported = importer.import_graph(model, inputs)
    check(imported.text == importer.import_module(model, inputs), "import_module and import_graph disagree")
    source, printed = read_back(ctx, imported.text, name)
    check_counts(printed, expected_counts, name)
    check_against_torch(ctx, model, inputs, imported, source, name, tolerance)
    return imported


def case_seed_models(ctx, importer, models):
    torch.manual_seed(3)
    import_and_check(ctx, importer, models.seed_matmul_relu(), [torch.randn(128, 128)], "seed_matmul_relu",
                     {"R.matmul": 1, "R.nn.relu": 1})
    imported = import_and_check(ctx, importer, models.seed_mlp(), [torch.randn(1, 784)], "seed_mlp",
                                {"R.permute_dims": 2, "R.matmul": 2, "R.add": 2, "R.nn.relu": 1})
    check(imported.weight_names == ["linear0.weight", "linear0.bias", "linear1.weight", "linear1.bias"],
          f"seed_mlp: weights in the wrong order: {imported.weight_names}")
    check('def main(x: R.Tensor((1, 784), dtype="float32"), linear0_weight: R.Tensor((128, 784), dtype="float32")'
          in imported.text, f"seed_mlp: parameters not named and typed as expected:\n{imported.text}")


def case_mixed(ctx, importer, models):
    torch.manual_seed(5)
    import_and_check(ctx, importer, models.mixed(), [torch.randn(1, 3, 16, 16)], "mixed",
                     {"R.nn.conv2d": 1, "R.reshape": 2, "R.add": 3, "R.nn.relu": 1, "R.nn.avg_pool2d": 1,
                      "R.nn.max_pool2d": 1, "R.permute_dims": 4, "R.multiply": 1, "R.subtract": 1,
                      "R.nn.layer_norm": 1, "R.nn.gelu": 1, "R.matmul": 2, "R.nn.softmax": 1, "R.mean": 1,
                      "R.sigmoid": 1, "[]": 0})


def randomize_batch_norms(model):
    """Non-trivial running statistics and affine parameters, so that batch_norm's import is really tested."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)


def case_resnet18(ctx, importer, models):
    import torchvision  # pylint: disable=import-outside-toplevel
    torch.manual_seed(18)
    model = torchvision.models.resnet18(weights=None)
    randomize_batch_norms(model)
    # 8 residual adds and the classifier's bias; 1 + 2 per basic block relus; one tuple item per batch_norm.
    import_and_check(ctx, importer, model, [torch.randn(1, 3, 224, 224)], "resnet18",
                     {"R.nn.conv2d": 20, "R.nn.batch_norm": 20, "[]": 20, "R.nn.relu": 17, "R.add": 9,
                      "R.nn.max_pool2d": 1, "R.nn.adaptive_avg_pool2d": 1, "R.reshape": 1, "R.permute_dims": 1,
                      "R.matmul": 1}, tolerance=1e-3)


def case_errors(ctx, importer, models):
    try:
        importer.import_module(models.unsupported(), [torch.randn(4)])
        check(False, "importing torch.cumprod did not fail")
    except importer.UnsupportedError as error:
        check("cumprod" in str(error), f"the error does not name the op: {error}")

    tool = os.path.join(ctx.importer_dir, "dpl_torch_import.py")
    models_file = os.path.join(HERE, "models.py")
    result = run([sys.executable, tool, f"{models_file}:seed_mlp", "--input", "1,784", "-o", ctx.path("cli.relax")])
    check(result.returncode == 0, f"the command line failed:\n{result.stderr}")
    with open(ctx.path("cli.relax"), encoding="utf-8") as text:
        _, printed = read_back(ctx, text.read(), "cli")
    check_counts(printed, {"R.permute_dims": 2, "R.matmul": 2, "R.add": 2, "R.nn.relu": 1}, "cli")

    result = run([sys.executable, tool, f"{models_file}:unsupported", "--input", "4"])
    check(result.returncode == 1 and "dpl_torch_import: error: unsupported:" in result.stderr
          and "cumprod" in result.stderr and result.stdout == "", f"unsupported op: {result}")
    result = run([sys.executable, tool, f"{models_file}:no_such_factory", "--input", "4"])
    check(result.returncode == 1 and "has no 'no_such_factory'" in result.stderr, f"missing factory: {result}")
    result = run([sys.executable, tool, f"{models_file}:seed_mlp", "--input", "1,x"])
    check(result.returncode == 2 and "comma-separated shape" in result.stderr, f"bad shape: {result}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["seed_models", "mixed", "resnet18", "errors"])
    parser.add_argument("--importer-dir", required=True)
    parser.add_argument("--dpl-opt", required=True)
    parser.add_argument("--eval", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    sys.path[:0] = [args.importer_dir, HERE]
    import dpl_torch_import  # pylint: disable=import-outside-toplevel
    import models  # pylint: disable=import-outside-toplevel
    globals()[f"case_{args.case}"](Context(args), dpl_torch_import, models)
    print(f"torch_import.{args.case}: ok")


if __name__ == "__main__":
    main()
