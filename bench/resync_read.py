# Reads one Resource List with the Python reference client resync (ResourceList.read), for the side-by-side
# benchmark. resync is not part of this project: RESYNC_SRC names a folder holding its `resync` package.
# Prints: entries seconds rss_growth_mb peak_rss_mb
import resource
import sys
import time

sys.path.insert(0, sys.argv[1])
from resync.resource_list import ResourceList  # noqa: E402

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
resource_list = ResourceList()
resource_list.read(uri=sys.argv[2])
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{len(resource_list)} {seconds:.3f} {(peak - before) / 1024:.1f} {peak / 1024:.1f}")
