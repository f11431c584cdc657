"""tracegraph.blockwise: a model predicted block by block through daisy (2
worker processes), Dask (a distributed LocalCluster of 2 processes, started
here) and the local loop, into zarr on disk, against torch's forward on the
whole (padded) volume. Small volumes that are no multiple of the block,
anisotropic voxels, a region of interest, an upsampling model with three
output channels, a run killed half way and started again."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import needs_torch

pytestmark = needs_torch
zarr = pytest.importorskip("zarr")

import tracegraph  # noqa: E402


def _nets():
    import torch
    import torch.nn as nn

    def convs(a, b, pad):
        return nn.Sequential(nn.Conv3d(a, b, 3, padding=pad), nn.ReLU(), nn.Conv3d(b, b, 3, padding=pad), nn.ReLU())

    class ValidUNet(nn.Module):
        """Valid 3x3x3 convolutions, one pooling by 2, the skip cropped by a constant 4: sizes 2k from 14 on,
        the output n - 16, offset 8."""

        def __init__(self):
            super().__init__()
            self.enc, self.pool, self.mid = convs(1, 4, 0), nn.MaxPool3d(2), convs(4, 8, 0)
            self.up, self.dec, self.head = nn.ConvTranspose3d(8, 4, 2, stride=2), convs(8, 4, 0), nn.Conv3d(4, 2, 1)

        def forward(self, x):
            f = self.enc(x)
            u = self.up(self.mid(self.pool(f)))
            return self.head(self.dec(torch.cat([f[:, :, 4:-4, 4:-4, 4:-4], u], 1)))

    class SameUNet(nn.Module):
        """Same-padded convolutions, two poolings by 2: sizes 4k, no context cut, a receptive field of about 14."""

        def __init__(self):
            super().__init__()
            self.enc0, self.enc1, self.enc2, self.pool = convs(1, 4, 1), convs(4, 4, 1), convs(4, 4, 1), nn.MaxPool3d(2)
            self.up1, self.dec1 = nn.ConvTranspose3d(4, 4, 2, stride=2), convs(8, 4, 1)
            self.up0, self.dec0 = nn.ConvTranspose3d(4, 4, 2, stride=2), convs(8, 4, 1)
            self.head = nn.Conv3d(4, 1, 1)

        def forward(self, x):
            f0 = self.enc0(x)
            f1 = self.enc1(self.pool(f0))
            f2 = self.enc2(self.pool(f1))
            d1 = self.dec1(torch.cat([f1, self.up1(f2)], 1))
            return self.head(self.dec0(torch.cat([f0, self.up0(d1)], 1)))

    class Upsampling(nn.Module):
        """A valid convolution, a transposed convolution by 2, a valid one to three channels: stride 1/2."""

        def __init__(self):
            super().__init__()
            self.a, self.up, self.b = nn.Conv3d(1, 4, 3), nn.ConvTranspose3d(4, 4, 2, stride=2), nn.Conv3d(4, 3, 3)

        def forward(self, x):
            return self.b(torch.relu(self.up(torch.relu(self.a(x)))))

    return ValidUNet, SameUNet, Upsampling


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The three models, seeded, as torch modules and as .pt2 files torch.export wrote."""
    import torch
    d = tmp_path_factory.mktemp("models")
    out = {}
    for i, (name, cls, size) in enumerate(zip(("valid", "same", "upsampling"), _nets(), (30, 32, 12))):
        torch.manual_seed(i)
        net = cls().eval()
        path = d / f"{name}.pt2"
        torch.export.save(torch.export.export(net, (torch.zeros(1, 1, size, size, size),)), str(path))
        out[name] = (net, str(path))
    return out


def _volume(tmp_path, shape, zarr_format, chunks=(16, 16, 16), seed=0):
    data = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    path = str(tmp_path / f"raw_v{zarr_format}.zarr")
    z = zarr.create_array(path, shape=shape, chunks=chunks, dtype="uint8", zarr_format=zarr_format)
    z[:] = data
    return data, path


def _whole_volume(net, path, x, plan, mode="constant"):
    """torch's forward on the whole volume, padded as the blocks' reads are (before by the first window's start,
    after to an accepted size), cropped to the output's grid: what every block must equal."""
    import torch
    geometry = tracegraph.network_geometry(path)[0].axes
    pads, crops = [], []
    for a, g in zip(plan.axes, geometry):
        skip = a.out_start % a.stride.denominator  # a window starts on a whole input voxel
        start = int(a.stride * (a.out_start - skip))
        n = a.input_size
        while g.output_size(n) is None or g.output_size(n) < a.out_size + skip:
            n += 1
        pads.append((-start, start + n - a.size))
        crops.append(slice(skip, skip + a.out_size))
    xp = np.pad(x, pads, mode=mode)
    with torch.no_grad():
        y = net(torch.from_numpy(xp.astype(np.float32))[None, None])[0].numpy()
    return y[(slice(None),) + tuple(crops)]


def _sigmoid(y):
    return 1 / (1 + np.exp(-y.astype(np.float64)))


def _read(out):
    root = zarr.open_group(out, mode="r")
    return root, root["0"][:]


def test_a_valid_unet_through_daisy_with_two_workers_equals_the_whole_volume(models, tmp_path):
    net, path = models["valid"]
    data, raw = _volume(tmp_path, (45, 38, 53), zarr_format=2)
    out = str(tmp_path / "pred.zarr")
    r = tracegraph.blockwise.predict(path, raw, out, block_shape=(16, 12, 16), scheduler="daisy", num_workers=2,
                                     normalize="dtype", activation="sigmoid", voxel_size=(40, 8, 8),
                                     offset=(400, 80, 0), zarr_format=2, progress=False)
    p = r.plan
    assert [a.offset for a in p.axes] == [8, 8, 8] and [a.stride for a in p.axes] == [1, 1, 1]
    assert p.output_shape == (2, 45, 38, 53) and r.blocks == 3 * 4 * 4 and r.ran == r.blocks
    root, y = _read(out)
    assert root["0"].chunks == (2, 16, 12, 16)
    ref = _sigmoid(_whole_volume(net, path, data / np.float32(255), p))
    np.testing.assert_allclose(y, ref, atol=1e-5, rtol=0)
    # OME-NGFF 0.4 in zarr v2: the output's voxel 0 lies where input voxel 0 does (the network's offset 8 less
    # the 8 output voxels before the input's first), scaled by the voxel size.
    ms = json.loads((tmp_path / "pred.zarr" / ".zattrs").read_text())["multiscales"][0]
    assert ms["version"] == "0.4" and [a["name"] for a in ms["axes"]] == ["c", "z", "y", "x"]
    assert ms["datasets"][0]["coordinateTransformations"] == [
        {"type": "scale", "scale": [1.0, 40.0, 8.0, 8.0]}, {"type": "translation", "translation": [0.0, 400.0, 80.0, 0.0]}]


def test_a_same_padded_unet_through_a_dask_cluster_equals_the_whole_volume(models, tmp_path):
    from distributed import Client, LocalCluster
    net, path = models["same"]
    data, raw = _volume(tmp_path, (61, 53, 50), zarr_format=3)
    out = str(tmp_path / "pred.zarr")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        r = tracegraph.blockwise.predict(path, raw, out, block_shape=16, scheduler="dask", client=client,
                                         normalize=(1 / 255, -0.5), progress=False)
        # One model load per worker process, whatever the number of blocks.
        loads = client.run(lambda: len(__import__("tracegraph.blockwise").blockwise._WORKERS))
    assert max(loads.values()) == 1 and len(loads) == 2
    p = r.plan
    # The halo is the network's own: how far its paddings' effects reach (its
    # receptive field, no context being cut), in whole steps of its grid.
    geometry = tracegraph.network_geometry(path)[0].axes
    assert all(g.edge_effects and g.halo() > 0 for g in geometry)
    assert [(a.halo, a.unit) for a in p.axes] == [(-(-g.halo() // 4) * 4, 4) for g in geometry]
    _, y = _read(out)
    ref = _whole_volume(net, path, data * np.float32(1 / 255) - np.float32(0.5), p)
    assert y.shape == ref.shape == (1, 61, 53, 50)
    np.testing.assert_allclose(y, ref, atol=1e-5, rtol=0)
    meta = json.loads((tmp_path / "pred.zarr" / "zarr.json").read_text())["attributes"]["ome"]
    assert meta["version"] == "0.5" and meta["multiscales"][0]["datasets"][0]["path"] == "0"


def test_without_a_halo_a_same_padded_unet_differs_at_the_block_borders(models, tmp_path):
    net, path = models["same"]
    data, raw = _volume(tmp_path, (32, 32, 32), zarr_format=3)
    r = tracegraph.blockwise.predict(path, data, str(tmp_path / "p.zarr"), block_shape=16, halo=0, scheduler="local",
                                     progress=False)
    _, y = _read(str(tmp_path / "p.zarr"))
    ref = _whole_volume(net, path, data.astype(np.float32), r.plan)
    assert np.abs(y - ref).max() > 1e-3  # why the network's halo is the default


def test_an_upsampling_model_with_three_channels_and_mirrored_edges(models, tmp_path):
    net, path = models["upsampling"]
    data, raw = _volume(tmp_path, (13, 17, 10), zarr_format=3, chunks=(8, 8, 8))
    out = str(tmp_path / "pred.zarr")
    r = tracegraph.blockwise.predict(path, raw, out, block_shape=(8, 6, 10), scheduler="local", normalize="dtype",
                                     activation="softmax", padding="reflect", voxel_size=(2.0, 1.0, 1.0),
                                     progress=False)
    p = r.plan
    assert [a.stride for a in p.axes] == [0.5] * 3 and p.channels == 3
    assert p.output_shape == (3, 26, 34, 20)  # two output voxels per input voxel, the first at input -1/4
    assert p.voxel_size == (1.0, 0.5, 0.5)
    _, y = _read(out)
    ref = _whole_volume(net, path, data / np.float32(255), p, mode="reflect")
    e = np.exp(ref - ref.max(0, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(0, keepdims=True), atol=1e-5, rtol=0)
    # Voxel 0's centre: input coordinate offset - 1/4 (the stride's half-voxel), times the voxel size.
    off = p.axes[0].offset + p.axes[0].stride * p.axes[0].out_start
    assert off == -0.25 and p.translation[0] == -0.5


def test_a_region_of_interest_is_the_whole_volume_run_cropped(models, tmp_path):
    net, path = models["valid"]
    data, raw = _volume(tmp_path, (40, 40, 40), zarr_format=3)
    whole = tracegraph.blockwise.plan(path, data.shape)
    roi = ((8, 4, 10), (20, 27, 22))
    r = tracegraph.blockwise.predict(path, raw, str(tmp_path / "roi.zarr"), block_shape=8, roi=roi,
                                     scheduler="local", progress=False)
    _, y = _read(str(tmp_path / "roi.zarr"))
    assert y.shape == (2, 20, 27, 22)
    ref = _whole_volume(net, path, data.astype(np.float32), whole)
    cut = tuple(slice(s, s + n) for s, n in zip(*roi))
    np.testing.assert_allclose(y, ref[(slice(None),) + cut], atol=1e-5, rtol=0)
    assert r.plan.translation == (8.0, 4.0, 10.0)
    with pytest.raises(tracegraph.InvalidArgumentError, match=r"axis 2: the region of interest starts at 7"):
        tracegraph.blockwise.plan(path, data.shape, roi=((7, 4, 10), (20, 20, 20)))
    with pytest.raises(tracegraph.InvalidArgumentError, match=r"axis 3: a block of 5 output voxels .* multiple of 2"):
        tracegraph.blockwise.plan(path, data.shape, block_shape=(8, 5, 8))


def test_a_second_sigmoid_is_refused_by_name(tmp_path):
    import torch
    import torch.nn as nn
    g = tracegraph.trace(nn.Sequential(nn.Conv3d(1, 1, 3), nn.Sigmoid()), (torch.zeros(1, 1, 8, 8, 8),))
    data = np.zeros((10, 10, 10), np.uint8)
    with pytest.raises(tracegraph.blockwise.DoubleActivationError, match=r"already ends in sigmoid \(node sigmoid\)"):
        tracegraph.blockwise.predict(g, data, str(tmp_path / "p.zarr"), activation="sigmoid", scheduler="local")
    assert issubclass(tracegraph.blockwise.DoubleActivationError, tracegraph.InvalidArgumentError)
    # Its own sigmoid, once.
    r = tracegraph.blockwise.predict(g, data, str(tmp_path / "p.zarr"), scheduler="local", progress=False)
    assert r.ran == r.blocks == 1


def test_a_run_killed_half_way_finishes_only_the_blocks_left(models, tmp_path):
    """The CLI through daisy with 2 workers, killed (its process group, SIGKILL) once some blocks are done;
    started again, it runs only the others, and the output is whole."""
    net, path = models["valid"]
    data, raw = _volume(tmp_path, (48, 48, 48), zarr_format=3)
    out = tmp_path / "pred.zarr"
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "tracegraph", "predict", path, raw, str(out), "--block", "4", "--scheduler", "daisy",
           "--workers", "2", "--normalize", "dtype", "--quiet"]
    first = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = out / ".tracegraph_blocks"
    deadline = time.time() + 120
    while time.time() < deadline and first.poll() is None:
        if done.is_dir() and len(os.listdir(done)) > 40:
            break
        time.sleep(0.01)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    before = len([n for n in os.listdir(done) if not n.startswith(".")])
    total = 12 ** 3
    assert 0 < before < total, f"the first run did {before} of {total} blocks before it was killed"
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    ran = int(second.stdout.split(" blocks run")[0].rsplit(" ", 1)[1])
    skipped = int(second.stdout.split(" done before")[0].rsplit(" ", 1)[1])
    assert skipped >= before and ran + skipped == total and ran < total
    _, y = _read(str(out))
    p = tracegraph.blockwise.plan(path, data.shape, block_shape=4)
    np.testing.assert_allclose(y, _whole_volume(net, path, data / np.float32(255), p), atol=1e-5, rtol=0)
