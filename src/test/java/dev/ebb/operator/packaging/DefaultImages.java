package dev.ebb.operator.packaging;

import dev.ebb.operator.config.EbbConfig;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.lang.reflect.Method;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Every image the operator runs when a ModelDeployment names none, read from the one place they are configured: the
 * defaults of {@link EbbConfig.Images}. A default added there reaches the bundle's related images with no other edit.
 */
final class DefaultImages {
    private DefaultImages() {}

    /** By the name of each image's setting (ebb.images.&lt;name&gt;). */
    static SortedMap<String, String> of() {
        SortedMap<String, String> images = new TreeMap<>();
        for (Method setting : EbbConfig.Images.class.getMethods()) {
            WithDefault image = setting.getAnnotation(WithDefault.class);
            if (setting.getParameterCount() > 0 || setting.getReturnType() != String.class) {
                continue;
            }
            if (image == null) {
                throw new IllegalStateException("ebb.images setting " + setting.getName() + " has no default image");
            }
            WithName name = setting.getAnnotation(WithName.class);
            // SmallRye's own naming of a setting without @WithName: its method's name in kebab case
            images.put(
                    name != null
                            ? name.value()
                            : setting.getName()
                                    .replaceAll("([a-z0-9])([A-Z])", "$1-$2")
                                    .toLowerCase(),
                    image.value());
        }
        return images;
    }
}
