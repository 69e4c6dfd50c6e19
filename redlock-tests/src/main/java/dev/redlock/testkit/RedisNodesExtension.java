package dev.redlock.testkit;

import java.lang.reflect.AnnotatedElement;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Resolves {@link FaultyNodes} parameters for {@link WithRedisNodes}; closes them after the test.
 */
public final class RedisNodesExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(RedisNodesExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == FaultyNodes.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    WithRedisNodes spec =
        find(context.getElement())
            .or(() -> context.getTestClass().flatMap(type -> find(Optional.of(type))))
            .orElseThrow(
                () ->
                    new ExtensionConfigurationException(
                        "a FaultyNodes parameter needs @WithRedisNodes(n)"));
    // Stored per test: the store closes it (by PID) when the test ends, passed or failed.
    return context
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(
            "nodes",
            key ->
                new Closing(
                    Tools.requireOrSkip(() -> FaultyNodes.start(spec.value(), spec.persistence()))),
            Closing.class)
        .nodes;
  }

  private static Optional<WithRedisNodes> find(Optional<? extends AnnotatedElement> element) {
    return element.map(e -> e.getAnnotation(WithRedisNodes.class));
  }

  private record Closing(FaultyNodes nodes) implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      nodes.close();
    }
  }
}
