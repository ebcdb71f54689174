// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: how a plugin contract checks one member of a class, for the
// net contract (<ncclnet/plugin_contract.hpp>) and the RMA contract
// (<ncclnet/rma_contract.hpp>). Each macro, expanded inside a namespace,
// defines traits named after the member, so each contract expands them in
// a namespace of its own.
#pragma once

#include <type_traits>

// declares_<m>_v<T>: T has a member m of exactly the type `params` spells (or its const
// variant; noexcept converts on its own). The static_cast picks the right
// one out of an overload set and refuses every other type.
#define NCCLNET_DETAIL_EXACT_MEMBER(Impl, name, params)                                           \
  template <class T, class = void>                                                                \
  struct exact_##name : std::false_type {};                                                       \
  template <class T>                                                                              \
  struct exact_##name<T, std::void_t<decltype(static_cast<ncclResult_t(T::*) params>(&T::name))>> \
      : std::true_type {};                                                                        \
  template <class T, class = void>                                                                \
  struct exactConst_##name : std::false_type {};                                                  \
  template <class T>                                                                              \
  struct exactConst_##name<                                                                       \
      T, std::void_t<decltype(static_cast<ncclResult_t(T::*) params const>(&T::name))>>           \
      : std::true_type {};                                                                        \
  template <class T>                                                                              \
  constexpr bool declares_##name##_v = exact_##name<T>::value || exactConst_##name<T>::value;

// names_<m>_v<T>: T has anything called m (any signature, overloaded,
// private, a data member), so that a wrong signature is reported instead of
// read as "absent". A class derived from T and from a probe holding m sees
// an ambiguous m exactly when T has one; a final class cannot be derived
// from, and is asked only for a single member m.
#define NCCLNET_DETAIL_NAMED_MEMBER(Impl, name, params)                                      \
  struct nameProbe_##name {                                                                  \
    int name;                                                                                \
  };                                                                                         \
  template <class T>                                                                         \
  struct nameMix_##name : T, nameProbe_##name {};                                            \
  template <class T, class = void>                                                           \
  struct namedViaMix_##name : std::true_type {};                                             \
  template <class T>                                                                         \
  struct namedViaMix_##name<T, std::void_t<decltype(&nameMix_##name<T>::name)>>              \
      : std::false_type {};                                                                  \
  template <class T, class = void>                                                           \
  struct namedDirectly_##name : std::false_type {};                                          \
  template <class T>                                                                         \
  struct namedDirectly_##name<T, std::void_t<decltype(&T::name)>> : std::true_type {};       \
  template <class T>                                                                         \
  constexpr bool names_##name##_v =                                                          \
      declares_##name##_v<T> ||                                                              \
      std::conditional_t<std::is_final_v<T> || !std::is_class_v<T>, namedDirectly_##name<T>, \
                         namedViaMix_##name<T>>::value;
