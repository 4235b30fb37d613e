"""Every public data file ddlsched reads: its source repository, pinned commit, original
path, size and SHA-256 (the one module that names the sources' host).

A file's place in the data directory is its :attr:`DataFile.path` (``traces/muri/trace1.csv``:
the layout the loaders read, :func:`ddlsched.datadir.data_file`). Its download URL is
``BASE/OWNER/REPO/COMMIT/ORIGINAL_PATH`` (:func:`source_url`), where ``BASE`` is
:data:`DEFAULT_BASE_URL` (the raw-file server of the public repositories) or the value of
``$DDLSCHED_DATA_URL``, a mirror laid out the same way (``OWNER/REPO/COMMIT/PATH``).

The ITP traces are distributed as one archive (``data/raw-traces.tar.gz`` of
microsoft/elasticflow-traces): :data:`ARCHIVES` gives its hash, and each file unpacked from it
(:attr:`DataFile.archive`, :attr:`DataFile.member`) has its own.

Every hash was computed on the files as the sources serve them at the pinned commit (checked
against each repository at that commit, 2026-11-28): pipedream and piper, whose public copies
name no commit, are pinned at the newest commit of their default branch (the files are the
same at every commit that has them); the Philly trace comes from adaptdl's ``osdi21-artifact``
branch, which has no license file, so its license file is adaptdl's ``LICENSE`` on the default
branch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "ARCHIVES",
    "DATASETS",
    "DEFAULT_BASE_URL",
    "FILES",
    "URL_ENV",
    "Archive",
    "DataFile",
    "Dataset",
    "base_url",
    "dataset_names",
    "file_by_path",
    "files_of",
    "source_url",
]

#: The raw-file server of the public source repositories (``OWNER/REPO/COMMIT/PATH`` below it).
DEFAULT_BASE_URL = "https://raw.githubusercontent.com/"
#: The environment variable that replaces :data:`DEFAULT_BASE_URL` (a mirror, same layout).
URL_ENV = "DDLSCHED_DATA_URL"


@dataclass(frozen=True)
class Dataset:
    """A data set: its command-line name, source repository, license and what it holds."""

    name: str
    repository: str  # OWNER/REPO
    license: str
    content: str


@dataclass(frozen=True)
class DataFile:
    """One file of the data directory and where it comes from.

    ``path``: its place in the data directory (``/``-separated); ``original``: its path in
    ``repository`` at ``commit``, or, when ``archive`` is set, the name of the member of that
    archive (a key of :data:`ARCHIVES`) it is unpacked from.
    """

    path: str
    dataset: str
    repository: str
    commit: str
    original: str
    sha256: str
    size: int
    archive: str | None = None


@dataclass(frozen=True)
class Archive:
    """An archive a source distributes files in: where it is kept in the data directory
    (``path``), where it comes from, its hash and size."""

    path: str
    dataset: str
    repository: str
    commit: str
    original: str
    sha256: str
    size: int


MURI_COMMIT = "4e69a78ce75f629a5a00abd48150a1860b341ce6"
ADAPTDL_ARTIFACT_COMMIT = "c793c7089bd307462686339d29707925c461f9a9"  # branch osdi21-artifact
ADAPTDL_LICENSE_COMMIT = "542e123e50e98e4a7a7132d36c4af06c9437f6e4"  # default branch (master)
ELASTICFLOW_COMMIT = "277ed24d0e908c31a1c98145819e2e3853d8ac00"
TIRESIAS_COMMIT = "959f9b08f44fa1b4f2b3aed79b01e4d439264a94"
PIPEDREAM_COMMIT = "7db6a1c3e64996d5b319faec6ca38cb31bfea1c4"  # newest on the default branch
DNN_PARTITIONING_COMMIT = "b207b6ad27a1407d321f1e028cea96d7f2c90e3e"
PIPER_COMMIT = "d7fc8cf91048f4b71dc2f9182fa14ebf720c016e"  # newest on the default branch

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "muri",
            "Rivendile/Muri",
            "Apache-2.0",
            "Muri's Philly-derived traces (trace1-4, *_pr, job_type_1-4), its testbed trace "
            "and cluster spec n8g8",
        ),
        Dataset(
            "philly",
            "petuum/adaptdl",
            "Apache-2.0 (repository); data derived from the Microsoft Philly trace (CC-BY-4.0)",
            "82,248 Philly jobs (Pollux's simulator trace)",
        ),
        Dataset(
            "itp",
            "microsoft/elasticflow-traces",
            "MIT",
            "69,351 jobs of 10 Microsoft ITP clusters (ElasticFlow's raw traces)",
        ),
        Dataset("tiresias", "SymbioticLab/Tiresias", "Apache-2.0", "Tiresias' 60-job example"),
        Dataset(
            "pipedream",
            "msr-fiddle/pipedream",
            "MIT",
            "PipeDream per-layer profiles (graph.txt) of 8 DNNs",
        ),
        Dataset(
            "dnn-partitioning",
            "msr-fiddle/dnn-partitioning",
            "MIT",
            "layer graphs of bert24, gnmt, inceptionv3, resnet50 (training)",
        ),
        Dataset("piper", "msr-fiddle/piper", "MIT", "32-layer BERT profiled on an A100"),
    )
}


def _muri(name: str, original: str, sha256: str, size: int) -> DataFile:
    return DataFile(
        f"traces/muri/{name}", "muri", "Rivendile/Muri", MURI_COMMIT, original, sha256, size
    )


def _pipedream(model: str, task: str, sha256: str, size: int) -> DataFile:
    return DataFile(
        f"profiles/pipedream/{model}/graph.txt",
        "pipedream",
        "msr-fiddle/pipedream",
        PIPEDREAM_COMMIT,
        f"profiler/{task}/profiles/{model}/graph.txt",
        sha256,
        size,
    )


def _partitioning(name: str, original: str, sha256: str, size: int) -> DataFile:
    return DataFile(
        f"profiles/dnn-partitioning/{name}",
        "dnn-partitioning",
        "msr-fiddle/dnn-partitioning",
        DNN_PARTITIONING_COMMIT,
        original,
        sha256,
        size,
    )


_ITP_ARCHIVE = "traces/itp/raw-traces.tar.gz"


def _itp(member: str, sha256: str, size: int) -> DataFile:
    return DataFile(
        f"traces/itp/raw-traces/{member}",
        "itp",
        "microsoft/elasticflow-traces",
        ELASTICFLOW_COMMIT,
        member,
        sha256,
        size,
        archive=_ITP_ARCHIVE,
    )


_TRACE_DATA = "simulator/trace-data"

ARCHIVES: dict[str, Archive] = {
    _ITP_ARCHIVE: Archive(
        _ITP_ARCHIVE,
        "itp",
        "microsoft/elasticflow-traces",
        ELASTICFLOW_COMMIT,
        "data/raw-traces.tar.gz",
        "67398e1a89245c50ae0881bf997e6cda0c95f9f47980af5bc56d67998965669f",
        1943846,
    )
}

_FILES: tuple[DataFile, ...] = (
    # Muri (Rivendile/Muri)
    _muri("trace1.csv", f"{_TRACE_DATA}/trace1.csv", "534d02a4ebe53aee1f60d3fb33e3b2207550bb28813e677c962051058ebafbc5", 97574),
    _muri("trace1_pr.csv", f"{_TRACE_DATA}/trace1_pr.csv", "dfa7a6b0f5ff6fe4aae4e51a948f05bc229d1883a779e9721f181b7270190945", 84097),
    _muri("trace2.csv", f"{_TRACE_DATA}/trace2.csv", "5c29e1c49ed7929bff67c8008e6f2abcafc64e70bb55cdc91801490ce2df7003", 374400),
    _muri("trace2_pr.csv", f"{_TRACE_DATA}/trace2_pr.csv", "de6449be0dcb9f48006a01eefb509f2845df8916b432672420bfb303a96f395e", 322682),
    _muri("trace3.csv", f"{_TRACE_DATA}/trace3.csv", "fc8d59783486122d9f522b430c1d5a59fbee119b41feb67a3f67e0751340ce93", 63755),
    _muri("trace3_pr.csv", f"{_TRACE_DATA}/trace3_pr.csv", "af45628e89017a4faf20e75c586320643c08a5dd4f2f952502c6fcb25aba5e6c", 54912),
    _muri("trace4.csv", f"{_TRACE_DATA}/trace4.csv", "69754a0fc95b75de47923eb755d81b4cd7f8df37d82f007f870881e12470f0d1", 167691),
    _muri("trace4_pr.csv", f"{_TRACE_DATA}/trace4_pr.csv", "affc099b308b8425852aa4dd20661506a3261f63a3b793ff174f65c7935b6acc", 144279),
    _muri("job_type_1.csv", f"{_TRACE_DATA}/job_type_1.csv", "f30e5e32bd698dc3dfd07ebc90a99edcc809f130d489cdfe8bf23be52982b271", 61308),
    _muri("job_type_2.csv", f"{_TRACE_DATA}/job_type_2.csv", "a1bcc3019aa3cc3544de558a46e7155fb27ad98aaddb6b8d2854979ac20409f0", 61454),
    _muri("job_type_3.csv", f"{_TRACE_DATA}/job_type_3.csv", "863c459ccf69be70122e7c5d90e67c3291d6cc38ba91e75ee9b3ddacd315bb5a", 64983),
    _muri("job_type_4.csv", f"{_TRACE_DATA}/job_type_4.csv", "fc8d59783486122d9f522b430c1d5a59fbee119b41feb67a3f67e0751340ce93", 63755),
    _muri("cluster_trace.csv", "cluster_exp/trace-data/cluster_trace.csv", "fe73b5e39c75ea73b3115d1d4fc7b19e482f7db13c1256a0756bf54bdc3befef", 25642),
    _muri("n8g8.csv", "simulator/cluster_spec/n8g8.csv", "3a3ae49716a8027296e2cf523ed180b6e78feca30ba985e42739002c00b18742", 82),
    _muri("LICENSE", "LICENSE", "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4", 11357),
    # Philly (petuum/adaptdl)
    DataFile("traces/philly/philly.csv", "philly", "petuum/adaptdl", ADAPTDL_ARTIFACT_COMMIT, "simulator/traces/philly.csv", "ebffb3dd1589bdf4e7bcd74496201c5ded1d557d498ee14f560463f37ec353da", 3444496),
    DataFile("traces/philly/LICENSE-adaptdl", "philly", "petuum/adaptdl", ADAPTDL_LICENSE_COMMIT, "LICENSE", "99fb2999f8f4524078370b40b9b421d7eafbd407e25c76f36a49ba3fd9bf56de", 11337),
    # ITP (microsoft/elasticflow-traces; the csv files come from data/raw-traces.tar.gz)
    _itp("cluster01.csv", "27d707f576fce5637f9efec43f610da3d335f36e3c6fd4ded2f5bccfce05974a", 83726),
    _itp("cluster02.csv", "7a5849e73aff9f9bc33f87c9bacadf8aab2f3a9e7bc5d70956f5cbf40126526c", 301866),
    _itp("cluster03.csv", "282d765c5289ab0ba870f494dd2c67893f9d16d726fdc8a51f13b7412515dbf8", 158198),
    _itp("cluster04.csv", "247850e4265f35749e98d15e82a67765301e81272334265f1fe60d65787892a9", 825103),
    _itp("cluster05.csv", "1553359ddd673a0ffc531ca10e73ba729dbacbce905ce878dbb8499d2dbed0fb", 189032),
    _itp("cluster06.csv", "52c0d9247d1de9b19a8bdafc25137daf6fa04f274ad3a2eb6dac51226ac2362e", 125228),
    _itp("cluster07.csv", "d4f46f32e2965c2265b2675c070565a86e40bff45733c828c5767bc0b8c1b318", 662831),
    _itp("cluster08.csv", "d60c20d0cd05ddf49fddffabbc784ba6177bbc1a762fc5cf8a0bc9056b084db8", 682210),
    _itp("cluster09.csv", "da4047d6f09cc41709ff85937c82e31f6a6791c896d22e241ae9e1dc7f82bcfd", 586203),
    _itp("cluster10.csv", "139abea485b52090f5950d0f28d82878169df408e36052ec5c7cd04a3f3fcfa7", 13689),
    _itp("LICENSE", "9906940f61b1f0b533fa7d99baf55178b2808fbe113ea51dfbfad8572ccd5f2b", 1162),
    DataFile("traces/itp/LICENSE", "itp", "microsoft/elasticflow-traces", ELASTICFLOW_COMMIT, "LICENSE", "c2cfccb812fe482101a8f04597dfc5a9991a6b2748266c47ac91b6a5aae15383", 1141),
    # Tiresias (SymbioticLab/Tiresias)
    DataFile("traces/tiresias/60_job.csv", "tiresias", "SymbioticLab/Tiresias", TIRESIAS_COMMIT, "simulator/60_job.csv", "17575949a6e570960db42bc5576739de9c334ed4c664859841c4f01ede38bd1b", 1871),
    DataFile("traces/tiresias/LICENSE", "tiresias", "SymbioticLab/Tiresias", TIRESIAS_COMMIT, "LICENSE", "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4", 11357),
    # PipeDream profiles (msr-fiddle/pipedream)
    _pipedream("alexnet", "image_classification", "e9a0bb73a0929b03be3a23cbcdf224c03ae39123bed685de4f1e17b65014d26b", 4093),
    _pipedream("inception_v3", "image_classification", "f51d9262119d7a4cb5f6cae4363a4f8ea94eead947d232c1c53f3cc11b9885cd", 64502),
    _pipedream("resnet18", "image_classification", "9514adf4714f637ebf45d614f61a79dac315ae6aaacbfa3f5a851a6531c863c4", 13873),
    _pipedream("resnet50", "image_classification", "5fc27812d75d7fa39946ef32ac8089cc277b0debc78c6d8200de3cb5c62ca7d2", 34693),
    _pipedream("resnet101", "image_classification", "6aac5b34ade0b0b691c46acadd5f73eea33814bb17d7d4dce0aaed8d89657c06", 68220),
    _pipedream("vgg16", "image_classification", "3e914ff5290644c6b1c871002d278e57fcc486c22ac07283480b7779f28e5b08", 7481),
    _pipedream("gnmt", "translation", "2c5b8415ed45b34b7530d051023de388a7e0dbc02cec38f9e43610f29211dc5a", 7999),
    _pipedream("gnmt_large", "translation", "290023c21f9c09eb4a191bdcf820f970b8709a9cc35e7a8920f9c6504272b4e6", 15735),
    DataFile("profiles/pipedream/LICENSE.txt", "pipedream", "msr-fiddle/pipedream", PIPEDREAM_COMMIT, "LICENSE.txt", "f177ff41be08b33d2360c93ef97d3e6cbe493c11320e1cd9bbdc00ab4c723a67", 1110),
    # dnn-partitioning layer graphs (msr-fiddle/dnn-partitioning)
    _partitioning("bert24_training.json", "throughput-inputs/LayerGraphs/bert24_training.json", "8edcf0e9300b16faa608a9eaf3083c6641dec751984f8ee82be8cdfe2126413c", 17508),
    _partitioning("gnmt_training.json", "throughput-inputs/LayerGraphs/gnmt_training.json", "452964e4b25c711b2153771b47ba1251dc0b9833bfb41bbcfad5d29c0fb33819", 48025),
    _partitioning("inceptionv3_training.json", "throughput-inputs/LayerGraphs/inceptionv3_training.json", "a910adbb9503247239e95cd9ef33798c7672005638e34ca21d5fafabc5b3b769", 163998),
    _partitioning("resnet50_training.json", "throughput-inputs/LayerGraphs/resnet50_training.json", "b32cf4d2c2cdeb9241d1f12177a06c569cc551b1a4511bc41a51c883edb5ed8a", 86136),
    _partitioning("LICENSE.txt", "LICENSE.txt", "18be128bd58efbb57f3d221da4a4735a06f5cb241f7bbc2fa0ef432581b7f8dd", 1206),
    # Piper (msr-fiddle/piper)
    DataFile("profiles/piper/bert32a100.json", "piper", "msr-fiddle/piper", PIPER_COMMIT, "inputs/bert32a100.json", "cc126436a4c238ec14cad466d176a178e9a9aad1e187f1d2a3cdb8b8d5ab1d1a", 135283),
    DataFile("profiles/piper/LICENSE.txt", "piper", "msr-fiddle/piper", PIPER_COMMIT, "LICENSE.txt", "bb5577718b1e13cefb67cce6b205181c9b94511138bd7b3200f1c07ea62aae4d", 1196),
)  # fmt: skip

#: Every registered file by its path in the data directory.
FILES: dict[str, DataFile] = {f.path: f for f in _FILES}


def dataset_names() -> list[str]:
    """The data set names, in the registry's order (``ddlsched data fetch NAME``)."""
    return list(DATASETS)


def files_of(dataset: str) -> list[DataFile]:
    """The registered files of ``dataset``."""
    return [f for f in FILES.values() if f.dataset == dataset]


def file_by_path(path: str) -> DataFile | None:
    """The registered file at ``path`` of the data directory (``/``-separated), or None."""
    return FILES.get(path)


def base_url() -> str:
    """The base of every download URL: ``$DDLSCHED_DATA_URL`` or :data:`DEFAULT_BASE_URL`,
    ending with ``/``."""
    base = os.environ.get(URL_ENV) or DEFAULT_BASE_URL
    return base if base.endswith("/") else base + "/"


def source_url(item: DataFile | Archive) -> str:
    """The download URL of a file or an archive (``BASE/OWNER/REPO/COMMIT/PATH``); a file
    unpacked from an archive is downloaded as (part of) the archive."""
    if isinstance(item, DataFile) and item.archive is not None:
        item = ARCHIVES[item.archive]
    return f"{base_url()}{item.repository}/{item.commit}/{item.original}"
