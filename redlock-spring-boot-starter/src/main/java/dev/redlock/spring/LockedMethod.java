package dev.redlock.spring;

import dev.redlock.config.RedlockConfig;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Optional;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardTypeConverter;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.StringValueResolver;

/**
 * One {@link Locked} method, read and checked once when its bean is created: the resource
 * expression parsed, the durations parsed as the core reads them, the not-acquired policy decided.
 * A mistake fails the bean's creation with a message naming the method, the attribute and the rule.
 */
final class LockedMethod {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  /**
   * Spring's conversions, and any other value as its {@code toString()}: a resource is text, and
   * {@code #{#date}} for a {@code LocalDate} should read {@code 2026-11-30}.
   */
  private static final StandardTypeConverter TO_TEXT;

  static {
    DefaultConversionService conversions = new DefaultConversionService();
    conversions.addConverter(Object.class, String.class, String::valueOf);
    TO_TEXT = new StandardTypeConverter(conversions);
  }

  final Method method;
  final String name;
  private final String resourceText;
  private final Expression resource;
  final Duration ttl;
  final Duration maxWait;
  final Duration lockAtLeastFor;
  final boolean skip;
  private final boolean returnsOptional;

  private LockedMethod(Method method, Locked locked, StringValueResolver placeholders) {
    this.method = method;
    this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
    int modifiers = method.getModifiers();
    if (Modifier.isStatic(modifiers)
        || Modifier.isPrivate(modifiers)
        || Modifier.isFinal(modifiers)) {
      throw new IllegalStateException(
          "@Locked on "
              + name
              + " cannot take effect: the method is "
              + (Modifier.isStatic(modifiers)
                  ? "static"
                  : Modifier.isPrivate(modifiers) ? "private" : "final")
              + ", so no proxy can run the lock around it");
    }
    this.resourceText = resolve(placeholders, locked.resource());
    if (resourceText.isBlank()) {
      throw new IllegalArgumentException(
          "@Locked(resource) on " + name + " must not be blank, was '" + locked.resource() + "'");
    }
    try {
      this.resource = PARSER.parseExpression(resourceText, ParserContext.TEMPLATE_EXPRESSION);
    } catch (ParseException e) {
      throw new IllegalArgumentException(
          "@Locked(resource = \""
              + locked.resource()
              + "\") on "
              + name
              + " is not a valid expression: "
              + e.getMessage(),
          e);
    }
    this.ttl = duration("ttl", locked.ttl(), placeholders);
    this.maxWait = duration("maxWait", locked.maxWait(), placeholders);
    this.lockAtLeastFor = duration("lockAtLeastFor", locked.lockAtLeastFor(), placeholders);
    if (lockAtLeastFor.isNegative()) {
      throw new IllegalArgumentException(
          "@Locked(lockAtLeastFor) on " + name + " must be >= 0, was " + lockAtLeastFor);
    }
    this.skip =
        switch (locked.whenNotAcquired()) {
          case SKIP -> true;
          case THROW -> false;
          case DEFAULT -> isScheduled(method);
        };
    this.returnsOptional = method.getReturnType() == Optional.class;
    if (skip && method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
      throw new IllegalArgumentException(
          "@Locked on "
              + name
              + " skips when the lock is not acquired, but returns "
              + method.getReturnType()
              + ", which has no value for 'did not run': return a wrapper or Optional, or use"
              + " whenNotAcquired = THROW");
    }
  }

  /**
   * Reads {@code method}'s {@link Locked}, or returns null if it has none.
   *
   * @throws IllegalArgumentException naming the method and attribute, for a malformed one
   * @throws IllegalStateException if the method cannot be proxied (static, private, final)
   */
  static LockedMethod of(Method method, StringValueResolver placeholders) {
    Locked locked = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
    return locked == null ? null : new LockedMethod(method, locked, placeholders);
  }

  private static boolean isScheduled(Method method) {
    return AnnotatedElementUtils.hasAnnotation(method, Scheduled.class)
        || AnnotatedElementUtils.hasAnnotation(method, Schedules.class);
  }

  private static String resolve(StringValueResolver placeholders, String text) {
    if (placeholders == null) {
      return text;
    }
    String resolved = placeholders.resolveStringValue(text);
    return resolved == null ? text : resolved;
  }

  private Duration duration(String attribute, String text, StringValueResolver placeholders) {
    String resolved = resolve(placeholders, text);
    try {
      return RedlockConfig.parseDuration(resolved);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "@Locked("
              + attribute
              + " = \""
              + text
              + "\") on "
              + name
              + ": "
              + e.getMessage().replaceFirst("^duration", attribute),
          e);
    }
  }

  /**
   * The resource for one call: the expression evaluated over the call's arguments.
   *
   * @throws IllegalArgumentException if it evaluates to nothing
   */
  String resource(Object target, Object[] args, BeanResolver beans) {
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(target, method, args, NAMES);
    context.setTypeConverter(TO_TEXT);
    if (beans != null) {
      context.setBeanResolver(beans);
    }
    String value = resource.getValue(context, String.class);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(
          "@Locked(resource = \""
              + resourceText
              + "\") on "
              + name
              + " evaluated to '"
              + value
              + "': a resource must not be blank");
    }
    return value;
  }

  /** What the method returns when it is skipped. */
  Object skippedResult() {
    return returnsOptional ? Optional.empty() : null;
  }

  static BeanResolver beans(org.springframework.beans.factory.BeanFactory factory) {
    return factory == null ? null : new BeanFactoryResolver(factory);
  }
}
