"""Tests of twolayer.paper_a.images: the CIFAR-10 binary-archive loader on small archives written
here in the official format (good, corrupt, truncated, wrong checksum, wrong layout), the digits
stand-in, splitting, standardization and binary labels."""

from __future__ import annotations

import hashlib
import re
import tarfile

import numpy as np
import pytest

from twolayer.core.params import HexDigest, OptionalDir, ParameterError
from twolayer.paper_a import images
from twolayer.paper_a.images import ArchiveError, DatasetUnavailable


def _batches(seed=0, n=(7, 5, 6, 4, 3), n_test=9):
    rng = np.random.default_rng(seed)
    mk = lambda k: (rng.integers(0, 256, (k, 3072), dtype=np.uint8), rng.integers(0, 10, k))  # noqa: E731
    return [mk(k) for k in n], mk(n_test)


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture()
def archive(tmp_path):
    train, test = _batches()
    path = images.write_cifar10_like(tmp_path / images.CIFAR10_ARCHIVE, train, test)
    return path, train, test


def test_official_record_layout_and_roundtrip(archive):
    path, train, test = archive
    with tarfile.open(path) as tar:
        names = sorted(m.name for m in tar)
        raw = tar.extractfile("cifar-10-batches-bin/data_batch_1.bin").read()
    assert names == sorted(
        f"cifar-10-batches-bin/{f}" for f in (*images.CIFAR10_TRAIN_FILES, images.CIFAR10_TEST_FILE)
    )
    # record i: byte 0 = label, bytes 1..3072 = pixels (R, G, B planes of 32 x 32)
    assert len(raw) == 7 * 3073
    assert raw[3073] == train[0][1][1] and raw[3074 : 3074 + 3072] == train[0][0][1].tobytes()
    tr, te = images.load_cifar10(path.parent, md5=_md5(path))
    assert tr.n == 25 and te.n == 9 and tr.d == 3072 and tr.shape == (3, 32, 32)
    np.testing.assert_array_equal(tr.X, np.concatenate([b[0] for b in train]).astype(float))
    np.testing.assert_array_equal(tr.labels, np.concatenate([b[1] for b in train]))
    np.testing.assert_array_equal(te.X, test[0].astype(float))
    np.testing.assert_array_equal(te.labels, test[1])


def test_sha256_verification(archive):
    path, _, _ = archive
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    images.load_cifar10(path, md5=None, sha256=sha)  # the archive path itself is accepted too
    with pytest.raises(ArchiveError, match="SHA256 checksum"):
        images.load_cifar10(path, md5=None, sha256="0" * 64)


def test_default_checksum_is_the_official_md5(archive):
    path, _, _ = archive
    assert images.CIFAR10_MD5 == "c32a1d4ab5d03f1284b67883e8d87530"
    with pytest.raises(ArchiveError) as err:  # our small archive is not the official one
        images.load_cifar10(path.parent)
    assert "MD5 checksum" in str(err.value) and images.CIFAR10_MD5 in str(err.value)


def test_corrupt_archive_fails_checksum_and_decoding(archive, tmp_path):
    path, _, _ = archive
    good_md5 = _md5(path)
    data = bytearray(path.read_bytes())
    for i in range(40, len(data) - 20, 97):  # flip bytes inside the compressed stream
        data[i] ^= 0xFF
    bad = tmp_path / "corrupt" / images.CIFAR10_ARCHIVE
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="MD5 checksum.*corrupt"):
        images.load_cifar10(bad.parent, md5=good_md5)
    # with the checksum of the corrupt file itself, decoding still refuses it
    with pytest.raises(ArchiveError, match="truncated or corrupt"):
        images.load_cifar10(bad.parent, md5=_md5(bad))


def test_one_flipped_byte_is_caught_by_gzips_crc(archive, tmp_path):
    """Random pixels compress into stored blocks: one flipped byte decodes into other pixels,
    and only gzip's CRC-32 at the end of the stream (after the tar's last block) sees it."""
    path, _, _ = archive
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "flipped" / images.CIFAR10_ARCHIVE
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="truncated or corrupt"):
        images.load_cifar10(bad.parent, md5=_md5(bad))


def test_truncated_archive(archive, tmp_path):
    path, _, _ = archive
    good_md5 = _md5(path)
    cut = tmp_path / "cut" / images.CIFAR10_ARCHIVE
    cut.parent.mkdir()
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ArchiveError, match="MD5 checksum"):
        images.load_cifar10(cut.parent, md5=good_md5)
    with pytest.raises(ArchiveError, match="truncated or corrupt"):
        images.load_cifar10(cut.parent, md5=_md5(cut))


def test_wrong_checksum(archive):
    path, _, _ = archive
    with pytest.raises(ArchiveError, match="expected 0{32}"):
        images.load_cifar10(path.parent, md5="0" * 32)


def test_truncated_record_and_bad_label(tmp_path):
    train, test = _batches()
    px, lb = train[2]
    path = images.write_cifar10_like(tmp_path / "a.tar.gz", train, test)
    # a batch file whose size is not a multiple of 3073 bytes
    raw = np.concatenate([lb.astype(np.uint8)[:, None], px], axis=1).tobytes()[:-100]
    with pytest.raises(ArchiveError, match="not a positive multiple"):
        images.parse_records(raw, "data_batch_3.bin")
    bad = np.concatenate([np.full((2, 1), 12, np.uint8), px[:2]], axis=1).tobytes()
    with pytest.raises(ArchiveError, match="label 12"):
        images.parse_records(bad, "x")
    assert path.exists()


def test_empty_batch_file_is_refused():
    """0 bytes is a multiple of the record size but holds no record: refused by name."""
    with pytest.raises(ArchiveError, match=r"^e\.bin has 0 bytes, not a positive multiple"):
        images.parse_records(b"", "e.bin")
    one = bytes(images.RECORD_BYTES)  # one record, label 0, black pixels
    px, lb = images.parse_records(one, "one.bin")
    assert px.shape == (1, 3072) and lb.tolist() == [0] and not px.any()


def test_labels_stop_at_9():
    """CIFAR-10 has ten classes, labels 0..9: a record labelled 9 (the last class, truck) is
    read, one labelled 10 (the first value past the classes) is refused, by name, with the
    whole message."""
    last = bytes([9]) + bytes(range(256)) * 12  # label 9, 3072 = 12 * 256 pixel bytes
    px, lb = images.parse_records(last, "nine.bin")
    assert lb.tolist() == [9] and px[0, :256].tolist() == list(range(256))
    past = bytes([10]) + bytes(3072)
    msg = (
        "ten.bin holds label 10; CIFAR-10 labels are 0..9 "
        "(the file is corrupt or not in the official binary format)"
    )
    with pytest.raises(ArchiveError, match=rf"^{re.escape(msg)}$"):
        images.parse_records(last + past, "ten.bin")


def test_archive_missing_a_batch(tmp_path):
    import io

    path = tmp_path / images.CIFAR10_ARCHIVE
    with tarfile.open(path, "w:gz") as tar:
        raw = bytes(3073)
        ti = tarfile.TarInfo("cifar-10-batches-bin/data_batch_1.bin")
        ti.size = len(raw)
        tar.addfile(ti, io.BytesIO(raw))
    with pytest.raises(ArchiveError, match="lacks data_batch_2.bin"):
        images.load_cifar10(tmp_path, md5=_md5(path))


def test_absent_archive_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv(images.CIFAR10_ENV, raising=False)
    with pytest.raises(DatasetUnavailable, match="no data_dir was given.*download=True"):
        images.load_cifar10(None)
    with pytest.raises(DatasetUnavailable, match="does not exist"):
        images.load_cifar10(tmp_path / "nowhere")
    monkeypatch.setenv(images.CIFAR10_ENV, str(tmp_path))
    with pytest.raises(DatasetUnavailable, match=r"\$CIFAR10_DIR"):
        images.load_cifar10(None)
    assert issubclass(DatasetUnavailable, FileNotFoundError)


def test_env_var_locates_archive(archive, monkeypatch):
    path, _, _ = archive
    monkeypatch.setenv(images.CIFAR10_ENV, str(path.parent))
    tr, te = images.load_cifar10(None, md5=_md5(path))
    assert tr.n == 25


def test_prepare_cifar10_binary_and_multiclass(archive):
    path, train, test = archive
    s = images.prepare(
        "cifar10", 20, 5, seed=0, task="binary", data_dir=path.parent, md5=_md5(path)
    )
    assert s.X_train.shape == (20, 3072) and s.X_test.shape == (5, 3072)
    assert s.X_train.min() >= 0 and s.X_train.max() <= 1
    assert set(np.unique(s.y_train)) <= {-1.0, 1.0}
    m = images.prepare("cifar10", 25, None, seed=0, data_dir=path.parent, md5=_md5(path))
    assert m.X_test.shape[0] == 9 and m.num_classes == 10
    np.testing.assert_array_equal(
        np.sort(m.y_train), np.sort(np.concatenate([b[1] for b in train]))
    )


def test_digits_stand_in():
    dg = images.load_digits()
    assert dg.X.shape == (1797, 64) and dg.X.min() == 0 and dg.X.max() == 16
    assert set(np.unique(dg.labels)) == set(range(10))


def test_split_is_seeded_disjoint_and_complete():
    dg = images.load_digits()
    a = images.train_test_split(dg, 300, None, seed=0)
    b = images.train_test_split(dg, 300, None, seed=0)
    c = images.train_test_split(dg, 300, None, seed=1)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    assert a[0].shape[0] == 300 and a[2].shape[0] == 1797 - 300
    rows = {r.tobytes() for r in np.concatenate([a[0], a[2]])}
    assert len(rows) == len({r.tobytes() for r in dg.X})  # every image used once
    assert images.train_test_split(dg, 300, 100, seed=0)[2].shape[0] == 100
    with pytest.raises(ValueError, match="n_train"):
        images.train_test_split(dg, 1797, None, seed=0)
    with pytest.raises(ValueError, match="n_test"):
        images.train_test_split(dg, 1000, 900, seed=0)


def test_standardize_modes():
    rng = np.random.default_rng(0)
    tr, te = rng.integers(0, 17, (50, 8)).astype(float), rng.integers(0, 17, (20, 8)).astype(float)
    tr[:, 0] = 3.0  # a constant pixel
    s_tr, s_te = images.standardize(tr, te, 16.0, "scale")
    np.testing.assert_allclose(s_tr, tr / 16)
    c_tr, c_te = images.standardize(tr, te, 16.0, "center")
    np.testing.assert_allclose(c_tr.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(c_te, te / 16 - (tr / 16).mean(0))
    z_tr, _ = images.standardize(tr, te, 16.0, "zscore")
    np.testing.assert_allclose(z_tr[:, 1:].std(0), 1)
    assert np.all(z_tr[:, 0] == 0)
    with pytest.raises(ValueError, match="mode"):
        images.standardize(tr, te, 16.0, "whiten")


def test_standardize_by_hand():
    """A worked example, max_value 4, two training images of two pixels (0, 2) and (4, 2), one
    test image (3, 0). Scale: train (0, 1/2), (1, 1/2), test (3/4, 0). Center by the training
    means (1/2, 1/2): train (-1/2, 0), (1/2, 0), test (1/4, -1/2). z-score by the training
    standard deviations (1/2, 0), the constant second pixel divided by 1 instead: train
    (-1, 0), (1, 0), test (1/2, -1/2)."""
    tr, te = np.array([[0.0, 2.0], [4.0, 2.0]]), np.array([[3.0, 0.0]])
    expected = {
        "scale": ([[0.0, 0.5], [1.0, 0.5]], [[0.75, 0.0]]),
        "center": ([[-0.5, 0.0], [0.5, 0.0]], [[0.25, -0.5]]),
        "zscore": ([[-1.0, 0.0], [1.0, 0.0]], [[0.5, -0.5]]),
    }
    for mode, (e_tr, e_te) in expected.items():
        s_tr, s_te = images.standardize(tr, te, 4.0, mode)
        np.testing.assert_array_equal(s_tr, e_tr)
        np.testing.assert_array_equal(s_te, e_te)
    # the default mode is "scale"
    s_tr, s_te = images.standardize(tr, te, 4.0)
    np.testing.assert_array_equal(s_tr, expected["scale"][0])
    np.testing.assert_array_equal(s_te, expected["scale"][1])


def test_standardize_max_value_must_be_positive():
    """Any positive max_value is a scale, also one below 1 (pixels in [0, 1/2] become
    [0, 1]); zero, a negative value and NaN are refused, with the whole message."""
    s_tr, s_te = images.standardize(np.array([[0.25, 0.5]]), np.array([[0.125, 0.0]]), 0.5)
    np.testing.assert_array_equal(s_tr, [[0.5, 1.0]])
    np.testing.assert_array_equal(s_te, [[0.25, 0.0]])
    x = np.ones((2, 2))
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match=r"^max_value must be positive$"):
            images.standardize(x, x, bad)


def test_binary_labels():
    lab = np.arange(10)
    np.testing.assert_array_equal(images.binary_labels(lab, "digits"), [1, -1] * 5)
    np.testing.assert_array_equal(
        images.binary_labels(lab, "cifar10"), [1, 1, -1, -1, -1, -1, -1, -1, 1, 1]
    )


def test_parameter_types():
    assert OptionalDir().validate("data_dir", None) is None
    assert OptionalDir().validate("data_dir", "/x") == "/x"
    for bad in ("", 3, ["a"]):
        with pytest.raises(ParameterError, match="'data_dir'"):
            OptionalDir().validate("data_dir", bad)
    h = HexDigest(32)
    assert h.validate("archive_md5", "C32A1D4AB5D03F1284B67883E8D87530") == images.CIFAR10_MD5
    for bad in (None, "xyz", "g" * 32, 5):
        with pytest.raises(ParameterError, match="'archive_md5'"):
            h.validate("archive_md5", bad)
    assert HexDigest(64, optional=True).validate("archive_sha256", None) is None
