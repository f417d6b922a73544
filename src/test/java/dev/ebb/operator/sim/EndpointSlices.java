package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.List;

/** Where a client of a Service learns its endpoints: the test world's controller, or a real cluster's slices. */
public interface EndpointSlices {
    /** The EndpointSlices of one Service as last seen. */
    List<EndpointSlice> slicesOf(String namespace, String service);
}
