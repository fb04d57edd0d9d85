#!/usr/bin/python3
"""dpl_torch_import: traces a PyTorch nn.Module with torch.fx and writes it as dpl's TVMScript (Relax) text.

As a tool:   dpl_torch_import.py torchvision.models:resnet18 --input 1,3,224,224 -o resnet18.relax
As a module: import_module(model, [torch.randn(1, 3, 224, 224)]) returns the text; import_graph() also gives the
             order of the weight parameters.

The model is imported for inference (it is put in eval mode): batch_norm uses the running statistics and dropout
is the identity. Every parameter and buffer the graph reads becomes a function parameter after the inputs, named
after its qualified name with dots replaced by underscores (`layer1.0.conv1.weight` -> `layer1_0_conv1_weight`;
`p_` in front of one that starts with a digit, a `_1` suffix where names would collide),
in the order the graph first uses them.
Types come from running the model once on the example inputs (torch.fx ShapeProp).
"""

import argparse
import importlib
import importlib.util
import operator
import sys
from typing import NamedTuple

import torch
import torch.fx
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp


class UnsupportedError(Exception):
    """The module uses an operation (or an argument of one) that the importer cannot express."""


_DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
    torch.int64: "int64", torch.int32: "int32", torch.bool: "bool",
}


def _dtype_name(dtype):
    if dtype not in _DTYPES:
        raise UnsupportedError(f"dtype {dtype} has no Relax spelling here")
    return _DTYPES[dtype]


def _tensor_type(shape, dtype):
    dims = ", ".join(str(int(d)) for d in shape)
    if len(shape) == 1:
        dims += ","
    return f'R.Tensor(({dims}), dtype="{_dtype_name(dtype)}")'


def _ints(values):
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _pair(value):
    return list(value) if isinstance(value, (tuple, list)) else [value, value]


def _float(value):
    return repr(float(value))


class _Importer:
    """Walks an fx graph whose nodes carry tensor_meta and collects parameters and bindings."""

    def __init__(self, graph_module):
        self.module = graph_module
        self.params = []          # (name, type text) in order: inputs first, then weights as first used
        self.weight_names = []    # qualified torch names of the weights, in parameter order
        self._weights = {}        # qualified name -> parameter name
        self.bindings = []        # (name, type text, expression)
        self.weight_shapes = {}   # parameter name -> shape
        self._values = {}         # fx node -> Relax name of its value
        self._used_names = set()
        self._counter = 0

    # --- names and bindings ---

    def _unique(self, base):
        """`base` made a Relax identifier no other parameter or binding uses."""
        name = base if base[:1].isalpha() or base[:1] == "_" else "p_" + base
        candidate, suffix = name, 1
        while candidate in self._used_names:
            candidate, suffix = f"{name}_{suffix}", suffix + 1
        self._used_names.add(candidate)
        return candidate

    def _fresh(self):
        while f"lv{self._counter}" in self._used_names:
            self._counter += 1
        return self._unique(f"lv{self._counter}")

    def _bind(self, type_text, expression):
        name = self._fresh()
        self.bindings.append((name, type_text, expression))
        return name

    def _weight(self, qualified_name):
        """The parameter holding the module's parameter or buffer `qualified_name`."""
        if qualified_name not in self._weights:
            tensor = _get_tensor(self.module, qualified_name)
            name = self._unique(qualified_name.replace(".", "_"))
            self._weights[qualified_name] = name
            self.weight_names.append(qualified_name)
            self.weight_shapes[name] = list(tensor.shape)
            self.params.append((name, _tensor_type(tensor.shape, tensor.dtype)))
        return self._weights[qualified_name]

    def _value(self, arg, like=None):
        """The Relax operand for an fx argument: a bound value, or a scalar constant (dtype of `like`)."""
        if isinstance(arg, torch.fx.Node):
            return self._values[arg]
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            dtype = _node_meta(like).dtype if like is not None else torch.float32
            return f'R.const({_float(arg) if dtype.is_floating_point else int(arg)}, "{_dtype_name(dtype)}")'
        raise UnsupportedError(f"operand {arg!r} is neither a value nor a number")

    # --- the graph ---

    def run(self):
        output = None
        for node in self.module.graph.nodes:
            if node.op == "placeholder":
                meta = _node_meta(node)
                name = self._unique(node.name)
                self.params.append((name, _tensor_type(meta.shape, meta.dtype)))
                self._values[node] = name
            elif node.op == "get_attr":
                self._values[node] = self._weight(node.target)
            elif node.op == "output":
                output = node.args[0]
            else:
                self._values[node] = self._convert(node)
        if not isinstance(output, torch.fx.Node):
            raise UnsupportedError("the module must return a single tensor")
        return self._values[output]

    def _type(self, node):
        meta = _node_meta(node)
        return _tensor_type(meta.shape, meta.dtype)

    def _convert(self, node):
        if node.op == "call_module":
            submodule = self.module.get_submodule(node.target)
            handler = _MODULE_HANDLERS.get(type(submodule))
            if handler is None:
                raise UnsupportedError(f"{node.name}: module {node.target} of type {type(submodule).__name__}")
            return handler(self, node, submodule)
        if node.op in ("call_function", "call_method"):
            key = node.target if node.op == "call_function" else "." + node.target
            handler = _FUNCTION_HANDLERS.get(key)
            if handler is None:
                name = getattr(node.target, "__name__", str(node.target))
                raise UnsupportedError(f"{node.name}: {node.op} {name}")
            return handler(self, node)
        raise UnsupportedError(f"{node.name}: fx node kind {node.op}")

    # --- building blocks shared by module and function forms ---

    def unary(self, node, op, x=None, attrs=""):
        operand = self._values[x if x is not None else node.args[0]]
        return self._bind(self._type(node), f"R.{op}({operand}{attrs})")

    def binary(self, node, op):
        lhs, rhs = node.args[0], node.args[1]
        like = lhs if isinstance(lhs, torch.fx.Node) else rhs
        if len(node.args) > 2 or node.kwargs.get("alpha", 1) != 1:
            raise UnsupportedError(f"{node.name}: {op} with alpha")
        return self._bind(self._type(node), f"R.{op}({self._value(lhs, like)}, {self._value(rhs, like)})")

    def reshape(self, node, x):
        shape = _node_meta(node).shape
        return self._bind(self._type(node), f"R.reshape({self._values[x]}, R.shape({_ints(shape)}))")

    def linear(self, node, x, weight, bias):
        out_features, in_features = self.weight_shapes[weight]
        transposed = self._bind(_tensor_type([in_features, out_features], _node_meta(node).dtype),
                                f"R.permute_dims({weight}, axes=[1, 0])")
        product = self._bind(self._type(node), f'R.matmul({self._values[x]}, {transposed}, out_dtype="void")')
        if bias is None:
            return product
        return self._bind(self._type(node), f"R.add({product}, {bias})")

    def conv2d(self, node, x, weight, bias, stride, padding, dilation, groups):
        if isinstance(padding, str):
            raise UnsupportedError(f"{node.name}: conv2d with padding='{padding}'")
        pad_h, pad_w = _pair(padding)
        out = self._bind(self._type(node),
                         f"R.nn.conv2d({self._values[x]}, {weight}, strides={_ints(_pair(stride))}, "
                         f"padding={_ints([pad_h, pad_w, pad_h, pad_w])}, dilation={_ints(_pair(dilation))}, "
                         f'groups={int(groups)}, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", '
                         f'out_dtype="void")')
        if bias is None:
            return out
        channels = _node_meta(node).shape[1]
        shaped = self._bind(_tensor_type([1, channels, 1, 1], _node_meta(node).dtype),
                            f"R.reshape({bias}, R.shape([1, {channels}, 1, 1]))")
        return self._bind(self._type(node), f"R.add({out}, {shaped})")

    def batch_norm(self, node, x, weight, bias, mean, var, eps):
        meta = _node_meta(node)
        channels = meta.shape[1]
        stats_type = _tensor_type([channels], meta.dtype)
        tuple_type = f"R.Tuple({self._type(node)}, {stats_type}, {stats_type})"
        normed = self._bind(tuple_type,
                            f"R.nn.batch_norm({self._values[x]}, {weight}, {bias}, {mean}, {var}, axis=1, "
                            f"epsilon={_float(eps)}, center=True, scale=True, momentum=0.1, training=False)")
        return self._bind(self._type(node), f"{normed}[0]")

    def pool2d(self, node, op, x, kernel, stride, padding, dilation, ceil_mode, count_include_pad):
        pad_h, pad_w = _pair(padding)
        stride = kernel if stride is None or stride == [] else stride
        return self._bind(self._type(node),
                          f"R.nn.{op}({self._values[x]}, pool_size={_ints(_pair(kernel))}, "
                          f"strides={_ints(_pair(stride))}, dilation={_ints(_pair(dilation))}, "
                          f"padding={_ints([pad_h, pad_w, pad_h, pad_w])}, ceil_mode={bool(ceil_mode)}, "
                          f'count_include_pad={bool(count_include_pad)}, layout="NCHW", out_layout="NCHW")')

    def adaptive_avg_pool2d(self, node, x):
        height, width = _node_meta(node).shape[2:]
        return self._bind(self._type(node),
                          f"R.nn.adaptive_avg_pool2d({self._values[x]}, output_size={_ints([height, width])}, "
                          f'layout="NCHW", out_layout="NCHW")')

    def alias(self, node, x):
        return self._values[x]

    def weight_of(self, node, submodule, attribute):
        """The parameter for `submodule.attribute` (None when the submodule has no such tensor)."""
        if getattr(submodule, attribute, None) is None:
            return None
        return self._weight(f"{node.target}.{attribute}")


def _get_tensor(module, qualified_name):
    """The parameter or buffer `qualified_name` of `module`."""
    try:
        return module.get_parameter(qualified_name)
    except AttributeError:  # not a parameter: a buffer, or (get_attr of a plain tensor attribute) neither
        pass
    try:
        return module.get_buffer(qualified_name)
    except AttributeError:
        raise UnsupportedError(f"{qualified_name} is neither a parameter nor a buffer of the module") from None


def _node_meta(node):
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        raise UnsupportedError(f"{node.name}: its value is not a single tensor")
    return meta


def _arg(node, index, name, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _require_weight(importer, arg, what):
    if not isinstance(arg, torch.fx.Node) or arg.op != "get_attr":
        raise UnsupportedError(f"{what}: the weight must be a module parameter")
    return importer._values[arg]


def _optional_weight(importer, arg, what):
    return None if arg is None else _require_weight(importer, arg, what)


def _flatten(importer, node):
    return importer.reshape(node, node.args[0])


def _module_conv2d(importer, node, conv):
    if conv.padding_mode != "zeros":
        raise UnsupportedError(f"{node.name}: conv2d with padding_mode='{conv.padding_mode}'")
    return importer.conv2d(node, node.args[0], importer.weight_of(node, conv, "weight"),
                           importer.weight_of(node, conv, "bias"), conv.stride, conv.padding, conv.dilation,
                           conv.groups)


def _module_batch_norm(importer, node, norm):
    if norm.running_mean is None:
        raise UnsupportedError(f"{node.name}: batch_norm without running statistics")
    weight = importer.weight_of(node, norm, "weight")
    bias = importer.weight_of(node, norm, "bias")
    if weight is None or bias is None:
        raise UnsupportedError(f"{node.name}: batch_norm without affine parameters")
    return importer.batch_norm(node, node.args[0], weight, bias, importer.weight_of(node, norm, "running_mean"),
                               importer.weight_of(node, norm, "running_var"), norm.eps)


def _module_layer_norm(importer, node, norm):
    weight = importer.weight_of(node, norm, "weight")
    bias = importer.weight_of(node, norm, "bias")
    if weight is None or bias is None:
        raise UnsupportedError(f"{node.name}: layer_norm without affine parameters")
    axes = list(range(-len(norm.normalized_shape), 0))
    return importer._bind(importer._type(node),
                          f"R.nn.layer_norm({importer._values[node.args[0]]}, {weight}, {bias}, axes={_ints(axes)}, "
                          f"epsilon={_float(norm.eps)}, center=True, scale=True)")


def _softmax(importer, node, dim):
    if dim is None:
        raise UnsupportedError(f"{node.name}: softmax without dim")
    return importer.unary(node, "nn.softmax", attrs=f", axis={int(dim)}")


_MODULE_HANDLERS = {
    torch.nn.Linear: lambda im, node, m: im.linear(node, node.args[0], im.weight_of(node, m, "weight"),
                                                   im.weight_of(node, m, "bias")),
    torch.nn.Conv2d: _module_conv2d,
    torch.nn.BatchNorm2d: _module_batch_norm,
    torch.nn.LayerNorm: _module_layer_norm,
    torch.nn.ReLU: lambda im, node, m: im.unary(node, "nn.relu"),
    torch.nn.GELU: lambda im, node, m: im.unary(node, "nn.gelu" if m.approximate == "none" else "nn.gelu_tanh"),
    torch.nn.SiLU: lambda im, node, m: im.unary(node, "nn.silu"),
    torch.nn.Sigmoid: lambda im, node, m: im.unary(node, "sigmoid"),
    torch.nn.Tanh: lambda im, node, m: im.unary(node, "tanh"),
    torch.nn.Softmax: lambda im, node, m: _softmax(im, node, m.dim),
    torch.nn.MaxPool2d: lambda im, node, m: im.pool2d(node, "max_pool2d", node.args[0], m.kernel_size, m.stride,
                                                      m.padding, m.dilation, m.ceil_mode, False),
    torch.nn.AvgPool2d: lambda im, node, m: im.pool2d(node, "avg_pool2d", node.args[0], m.kernel_size, m.stride,
                                                      m.padding, 1, m.ceil_mode, m.count_include_pad),
    torch.nn.AdaptiveAvgPool2d: lambda im, node, m: im.adaptive_avg_pool2d(node, node.args[0]),
    torch.nn.Flatten: lambda im, node, m: _flatten(im, node),
    torch.nn.Identity: lambda im, node, m: im.alias(node, node.args[0]),
    torch.nn.Dropout: lambda im, node, m: im.alias(node, node.args[0]),
}


def _function_linear(importer, node):
    weight = _require_weight(importer, _arg(node, 1, "weight"), node.name)
    bias = _optional_weight(importer, _arg(node, 2, "bias"), node.name)
    return importer.linear(node, node.args[0], weight, bias)


def _function_conv2d(importer, node):
    return importer.conv2d(node, node.args[0], _require_weight(importer, _arg(node, 1, "weight"), node.name),
                           _optional_weight(importer, _arg(node, 2, "bias"), node.name), _arg(node, 3, "stride", 1),
                           _arg(node, 4, "padding", 0), _arg(node, 5, "dilation", 1), _arg(node, 6, "groups", 1))


def _function_max_pool2d(importer, node):
    if _arg(node, 6, "return_indices", False):
        raise UnsupportedError(f"{node.name}: max_pool2d with return_indices")
    return importer.pool2d(node, "max_pool2d", node.args[0], _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                           _arg(node, 3, "padding", 0), _arg(node, 4, "dilation", 1), _arg(node, 5, "ceil_mode", False),
                           False)


def _function_permute(importer, node):
    dims = node.args[1:] if len(node.args) > 2 else _arg(node, 1, "dims")
    return importer.unary(node, "permute_dims", attrs=f", axes={_ints(dims)}")


def _function_transpose(importer, node):
    rank = len(_node_meta(node).shape)
    first, second = (int(d) % rank for d in node.args[1:3])
    axes = list(range(rank))
    axes[first], axes[second] = axes[second], axes[first]
    return importer.unary(node, "permute_dims", attrs=f", axes={_ints(axes)}")


def _function_mean(importer, node):
    dims = _arg(node, 1, "dim")
    dims = [dims] if isinstance(dims, int) else list(dims)
    keepdim = bool(_arg(node, 2, "keepdim", False))
    return importer.unary(node, "mean", attrs=f", axis={_ints(dims)}, keepdims={keepdim}")


_BINARY = {operator.add: "add", torch.add: "add", ".add": "add",
           operator.sub: "subtract", torch.sub: "subtract", ".sub": "subtract",
           operator.mul: "multiply", torch.mul: "multiply", ".mul": "multiply",
           operator.truediv: "divide", torch.div: "divide", ".div": "divide",
           torch.matmul: "matmul", operator.matmul: "matmul"}
_UNARY = {torch.relu: "nn.relu", F.relu: "nn.relu", ".relu": "nn.relu",
          torch.sigmoid: "sigmoid", ".sigmoid": "sigmoid", torch.tanh: "tanh", ".tanh": "tanh",
          F.silu: "nn.silu", torch.exp: "exp", ".exp": "exp", torch.sqrt: "sqrt", torch.rsqrt: "rsqrt",
          operator.neg: "negative", torch.neg: "negative"}

_FUNCTION_HANDLERS = {
    **{key: (lambda op: lambda im, node: im.binary(node, op))(op) for key, op in _BINARY.items()},
    **{key: (lambda op: lambda im, node: im.unary(node, op))(op) for key, op in _UNARY.items()},
    F.gelu: lambda im, node: im.unary(node, "nn.gelu" if node.kwargs.get("approximate", "none") == "none"
                                      else "nn.gelu_tanh"),
    F.softmax: lambda im, node: _softmax(im, node, _arg(node, 1, "dim")),
    torch.softmax: lambda im, node: _softmax(im, node, _arg(node, 1, "dim")),
    ".softmax": lambda im, node: _softmax(im, node, _arg(node, 1, "dim")),
    F.linear: _function_linear,
    F.conv2d: _function_conv2d,
    F.max_pool2d: _function_max_pool2d,
    F.adaptive_avg_pool2d: lambda im, node: im.adaptive_avg_pool2d(node, node.args[0]),
    torch.flatten: _flatten, ".flatten": _flatten, ".view": _flatten, ".reshape": _flatten, torch.reshape: _flatten,
    ".permute": _function_permute, torch.permute: _function_permute,
    ".transpose": _function_transpose, torch.transpose: _function_transpose,
    ".mean": _function_mean, torch.mean: _function_mean,
    ".contiguous": lambda im, node: im.alias(node, node.args[0]),
    F.dropout: lambda im, node: im.alias(node, node.args[0]),
}


class Imported(NamedTuple):
    text: str            # TVMScript text of one @R.function
    weight_names: list   # qualified names of the weights, in the order they follow the inputs as parameters


def import_graph(model, example_inputs, function_name="main", header=None):
    """`model` traced on `example_inputs` (a list of tensors): the text and the order of its weight parameters.

    Raises UnsupportedError naming the first fx node the importer cannot express."""
    model.eval()
    graph_module = torch.fx.symbolic_trace(model)
    with torch.no_grad():
        ShapeProp(graph_module).propagate(*example_inputs)
    importer = _Importer(graph_module)
    result = importer.run()
    params = ", ".join(f"{name}: {type_text}" for name, type_text in importer.params)
    result_type = next((t for name, t, _ in importer.bindings if name == result),
                       dict(importer.params).get(result))
    lines = ["# from tvm.script import relax as R"]
    if header:
        lines += [f"# {line}" for line in header.splitlines()]
    lines += ["", "@R.function", f"def {function_name}({params}) -> {result_type}:", "    with R.dataflow():"]
    lines += [f"        {name}: {type_text} = {expression}" for name, type_text, expression in importer.bindings]
    lines += [f"        R.output({result})", f"    return {result}", ""]
    return Imported("\n".join(lines), importer.weight_names)


def import_module(model, example_inputs, function_name="main", header=None):
    """`model` traced on `example_inputs` as TVMScript text (see import_graph)."""
    return import_graph(model, example_inputs, function_name, header).text


def load_model(spec):
    """`package.module:factory` or `path/to/file.py:factory`; the factory is called with no arguments."""
    location, _, attribute = spec.rpartition(":")
    if not location or not attribute:
        raise ValueError(f"model '{spec}' is not MODULE:FACTORY (e.g. torchvision.models:resnet18)")
    if location.endswith(".py"):
        module_spec = importlib.util.spec_from_file_location("dpl_torch_import_model", location)
        if module_spec is None:
            raise ValueError(f"cannot load {location}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if not hasattr(module, attribute):
        raise ValueError(f"{location} has no '{attribute}'")
    return getattr(module, attribute)()


def _parse_shape(text):
    try:
        shape = [int(d) for d in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated shape such as 1,3,224,224") from None
    if not shape or any(d <= 0 for d in shape):
        raise argparse.ArgumentTypeError(f"'{text}': dimensions must be positive")
    return shape


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="dpl_torch_import.py",
        description="Trace a PyTorch module with torch.fx and write it as TVMScript Relax text for dpl-opt. "
                    "Exit codes: 0 success, 1 the model cannot be loaded or imported, 2 usage error.")
    parser.add_argument("model", help="MODULE:FACTORY or FILE.py:FACTORY, called with no arguments "
                                      "(e.g. torchvision.models:resnet18)")
    parser.add_argument("--input", type=_parse_shape, action="append", required=True, metavar="D0,D1,...",
                        help="shape of one float32 input, in order; repeat for several inputs")
    parser.add_argument("-o", "--output", help="write the text here instead of stdout")
    args = parser.parse_args(argv)
    try:
        model = load_model(args.model)
        text = import_module(model, [torch.randn(shape) for shape in args.input],
                             header=f"Imported from {args.model} by dpl_torch_import.py")
    except (UnsupportedError, ValueError, ImportError, OSError) as error:
        kind = "unsupported: " if isinstance(error, UnsupportedError) else ""
        print(f"dpl_torch_import: error: {kind}{error}", file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
