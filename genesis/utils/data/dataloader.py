"""`DataLoader`: batches from a dataset, in the order a sampler gives (shuffled or not), on
this process or on worker processes, as PyTorch's."""
from __future__ import annotations

import multiprocessing
import queue
import time

from ...creation import randint
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import _DONE, StreamEnd, WorkerError, worker_loop

__all__ = ["DataLoader", "LoaderIterator"]


class LoaderIterator:
    """One pass over a DataLoader, what `iter(loader)` returns: the batches, one by one, and
    (as PyTorch's loader iterators) a length, the loader's.

    >>> import genesis
    >>> from genesis.utils.data import TensorDataset
    >>> batches = iter(DataLoader(TensorDataset(genesis.arange(5)), batch_size=2))
    >>> len(batches), next(batches)[0].tolist()
    (3, [0, 1])
    """

    def __init__(self, batches, *, len_of):
        self._batches, self._len_of = batches, len_of

    def __iter__(self) -> LoaderIterator:
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._len_of)


class DataLoader:
    """Iterate over `dataset` in batches.

    >>> import genesis
    >>> from genesis.utils.data import TensorDataset
    >>> data = TensorDataset(genesis.arange(5.0), genesis.arange(5))
    >>> [y.tolist() for _, y in DataLoader(data, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. "
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.timeout = dataset, num_workers, timeout
        self.pin_memory, self.worker_init_fn, self.generator = pin_memory, worker_init_fn, generator
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers else prefetch_factor
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        automatic = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn if collate_fn is not None else \
            (default_collate if automatic else default_convert)

    def __len__(self) -> int:
        if self._iterable:
            count = len(self.dataset)  # a TypeError for a stream without a length, as in PyTorch
            if self.batch_size is None:
                return count
            return count // self.batch_size if self.drop_last else -(-count // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self) -> LoaderIterator:
        # Drawn from `generator` for every pass, with or without workers, as PyTorch draws it:
        # the same seeded generator then repeats the workers' random draws, and a shuffle
        # that follows on that generator is the same for any num_workers.
        base_seed = int(randint(0, 2 ** 62, (), generator=self.generator).item())
        if self.num_workers == 0:
            return LoaderIterator(self._batches_here(), len_of=self)
        return LoaderIterator(self._batches_from_workers(base_seed), len_of=self)

    # -- on this process ---------------------------------------------------------------
    def _batches_here(self):
        if self._iterable:
            iterator = iter(self.dataset)
            while True:
                batch = self._next_stream_batch(iterator)
                if isinstance(batch, StreamEnd):
                    return
                yield batch
        else:
            for indices in self._index_batches():
                yield self._fetch(indices)

    def _index_batches(self):
        """Index lists (automatic batching) or single indices (batch_size=None)."""
        return iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def _fetch(self, indices):
        if self.batch_sampler is None:  # batching off: one sample
            return self.collate_fn(self.dataset[indices])
        fetch_many = getattr(self.dataset, "__getitems__", None)
        if fetch_many:  # as PyTorch's: a dataset may fetch a batch's samples in one call
            return self.collate_fn(fetch_many(indices))
        return self.collate_fn([self.dataset[index] for index in indices])

    def _next_stream_batch(self, iterator):
        """The next batch of an iterable dataset's stream, or _DONE."""
        if self.batch_size is None:
            for sample in iterator:
                return self.collate_fn(sample)
            return _DONE
        samples = []
        for sample in iterator:
            samples.append(sample)
            if len(samples) == self.batch_size:
                return self.collate_fn(samples)
        if samples and not self.drop_last:
            return self.collate_fn(samples)
        return _DONE

    # -- on worker processes -----------------------------------------------------------
    def _batches_from_workers(self, base_seed: int):
        """Batches loaded by worker processes; worker i is seeded from `base_seed` and i."""
        context = self.multiprocessing_context
        if context is None or isinstance(context, str):
            context = multiprocessing.get_context(context)
        results = [context.Queue() for _ in range(self.num_workers)] if self._iterable else \
            [context.Queue()]
        tasks = [context.Queue() for _ in range(self.num_workers)]
        fetch = self._next_stream_batch if self._iterable else self._fetch
        workers = [context.Process(
            target=worker_loop, daemon=True,
            args=(self.dataset, fetch, tasks[worker_id], results[worker_id if self._iterable else 0],
                  worker_id, self.num_workers, base_seed, self.worker_init_fn,
                  self._iterable)) for worker_id in range(self.num_workers)]
        for worker in workers:
            worker.start()
        try:
            if self._iterable:
                yield from self._round_robin(workers, results)
            else:
                yield from self._in_order(workers, tasks, results[0])
        finally:
            for task_queue in tasks:
                task_queue.put(None)
            for worker in workers:
                worker.join(timeout=5)
                if worker.is_alive():
                    worker.terminate()
            for channel in tasks + results:  # flush and close them now, not at interpreter exit
                channel.close()
                channel.join_thread()

    def _in_order(self, workers, tasks, results):
        """Batches of a map-style dataset, in the sampler's order, while up to
        prefetch_factor batches per worker are being loaded."""
        index_batches = enumerate(self._index_batches())
        in_flight, ready, sent, wanted = 0, {}, 0, 0
        for _ in range(self.prefetch_factor * len(workers)):
            task = next(index_batches, None)
            if task is None:
                break
            tasks[sent % len(workers)].put(task)
            sent, in_flight = sent + 1, in_flight + 1
        while in_flight or wanted in ready:
            while wanted not in ready:
                number, batch = self._get(results, workers)
                ready[number] = batch
                in_flight -= 1
            batch = ready.pop(wanted)
            if isinstance(batch, WorkerError):
                batch.reraise()
            wanted += 1
            task = next(index_batches, None)
            if task is not None:
                tasks[sent % len(workers)].put(task)
                sent, in_flight = sent + 1, in_flight + 1
            yield batch

    def _round_robin(self, workers, results):
        """Batches of an iterable dataset: one from each worker in turn, as PyTorch orders
        them, until every worker's stream has ended."""
        active = list(range(len(workers)))
        while active:
            for worker_id in list(active):
                number, batch = self._get(results[worker_id], [workers[worker_id]])
                if isinstance(batch, WorkerError):
                    batch.reraise()
                if isinstance(batch, StreamEnd):
                    active.remove(worker_id)
                    continue
                yield batch

    def _get(self, results, workers):
        """The next result, waiting at most `timeout` seconds (0: as long as it takes), and
        noticing a worker that died."""
        deadline = time.monotonic() + self.timeout if self.timeout else None
        while True:
            try:
                return results.get(timeout=0.5)
            except queue.Empty:
                for worker in workers:
                    if not worker.is_alive() and worker.exitcode not in (0, None):
                        raise RuntimeError(f"DataLoader worker (pid {worker.pid}) exited "
                                           f"unexpectedly with exit code {worker.exitcode}") from None
                if deadline is not None and time.monotonic() > deadline:
                    raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds") from None
