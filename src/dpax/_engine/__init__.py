"""dpax's numeric engine: the kernels and the bookkeeping beneath the public API.

Private: nothing here is a public name, and nothing here imports from the rest of dpax.
The modules follow the pipeline, bottom up:

* :mod:`.x64`, :mod:`.special`, :mod:`.validation`, :mod:`.text`: float64 scope and
  results, special functions, argument checks, number and table formatting;
* :mod:`.grid`, :mod:`.pair`: the loss grid, the memory budget and the PLRV arrays of a
  batch (:class:`.pair.Pair`);
* :mod:`.cache`, :mod:`.sharding`, :mod:`.batching`: compiled kernels on disk, device
  placement and chunking of rows, grouping rows into batches;
* :mod:`.construct` (dominating pairs), :mod:`.composition` (FFT composition),
  :mod:`.analyse` (trade-off curve, advantage, privacy profile), :mod:`.search`
  (vectorised bracketing of a monotone parameter), :mod:`.pld` (dp-accounting PLDs from
  a :class:`.pair.Pair`; dp-accounting is imported on use).
"""
