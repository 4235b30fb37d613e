"""The public data ddlsched reads (real traces, DNN profiles): where each file comes from,
its SHA-256, fetching it, checking it, and recording which files a result used.

Modules: :mod:`~ddlsched.data.registry` (every file: source repository, pinned commit,
original path, SHA-256, size; the download URLs), :mod:`~ddlsched.data.verify` (the hash
check the loaders run, cached per process), :mod:`~ddlsched.data.provenance` (the hashes
of the files this process read, copied into every result's ``info``),
:mod:`~ddlsched.data.fetch` (downloading with pooch, unpacking archives, the status of
each file). Where the files are looked up: :mod:`ddlsched.datadir`.
"""
