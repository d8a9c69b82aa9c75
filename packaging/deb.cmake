# packaging/deb.cmake — CPack settings for the three Debian packages: sobas (the shim and command), sobasd, sobas-top.
# Build them with scripts/package.sh; each install() rule names the component (package) it belongs to.

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL sobas sobasd sobas-top)
# Absolute destinations (/etc/sobas) are staged, not written to this host, only with DESTDIR.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Whoever builds packages for others names themselves: lintian rejects the default's mail host.
set(SOBAS_MAINTAINER "sobas developers <sobas@localhost>" CACHE STRING "Maintainer of the .deb packages")
set(CPACK_PACKAGE_CONTACT "${SOBAS_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps fills Depends from what each binary links (libc6, libstdc++6, libncursesw6, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF) # a preload library is no library to link against

# Descriptions: a summary line, then lines under 80 columns (CPack indents them by one space).
set(CPACK_DEBIAN_SOBAS_PACKAGE_NAME sobas)
set(CPACK_COMPONENT_SOBAS_DESCRIPTION "socket buffer auto-sizing for unmodified programs (LD_PRELOAD)
libsobas.so sizes each bulk TCP flow's window to the path's available
bandwidth (SOBAS): full rate without a standing queue or losses on long fat
networks. Run any program as `sobas PROGRAM` or with LD_PRELOAD; `sobas path
HOST` advises buffers for a path.")
set(CPACK_DEBIAN_SOBAS_PACKAGE_RECOMMENDS "sobas-top")
set(CPACK_DEBIAN_SOBAS_PACKAGE_SUGGESTS "sobasd")
# /etc/sobas/sobas.conf is the administrator's: kept over upgrades and removals, dropped on purge.
set(CPACK_DEBIAN_SOBAS_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/sobas/conffiles)

set(CPACK_DEBIAN_SOBASD_PACKAGE_NAME sobasd)
set(CPACK_COMPONENT_SOBASD_DESCRIPTION "side-probe responder for sobas peers
sobasd answers the UDP side probe of sobas flows (round-trip echoes, packet
trains for a capacity estimate, forward-path loss) for TCP peers it verifies
through sock_diag. It runs as a systemd unit under a dynamic user; the
package does not enable it.")
set(CPACK_DEBIAN_SOBASD_PACKAGE_CONTROL_EXTRA
  "${CMAKE_CURRENT_LIST_DIR}/sobasd/postinst;${CMAKE_CURRENT_LIST_DIR}/sobasd/prerm;${CMAKE_CURRENT_LIST_DIR}/sobasd/postrm")
set(CPACK_DEBIAN_SOBASD_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_SOBAS-TOP_PACKAGE_NAME sobas-top)
set(CPACK_COMPONENT_SOBAS-TOP_DESCRIPTION "live monitor of sobas flows
sobas-top shows every flow the sobas shim measures on this host: its state,
rate, round-trip time, window and what limits it, live from the shim's
decision ring; --json and --prometheus for scripts.")

# Debian's policy: each package carries its changelog, gzipped, in /usr/share/doc/<package>/.
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
set(changelog_gz ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${changelog_gz} DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog
  COMMAND gzip -9 -n -c ${CMAKE_BINARY_DIR}/packaging/changelog > ${changelog_gz} VERBATIM)
add_custom_target(changelog ALL DEPENDS ${changelog_gz})
foreach(component ${CPACK_COMPONENTS_ALL})
  install(FILES ${changelog_gz} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${component} COMPONENT ${component})
endforeach()

include(CPack)
