package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The OLM bundle checked in under bundle/ is the one the current build makes: a change to the CRD, RBAC,
 * Deployment or samples without `make bundle` fails here. */
class PackagedBundleIT {
    @Test
    void theCheckedInBundleIsTheOneThisBuildMakes() throws Exception {
        Map<String, String> rendered = OlmBundle.render(BundleWriter.inputs());
        List<String> stale = new ArrayList<>();
        for (Map.Entry<String, String> file : rendered.entrySet()) {
            Path path = BundleWriter.BUNDLE.resolve(file.getKey());
            if (!Files.isRegularFile(path)) {
                stale.add(path + " is missing");
            } else if (!Files.readString(path).equals(file.getValue())) {
                stale.add(path + " differs from what this build makes");
            }
        }
        for (Path checkedIn : BundleWriter.checkedIn()) {
            if (!rendered.containsKey(BundleWriter.relative(checkedIn))) {
                stale.add(checkedIn + " is no longer part of the bundle");
            }
        }

        assertThat(stale).as("the bundle is stale: run `make bundle` and commit bundle/").isEmpty();
    }
}
