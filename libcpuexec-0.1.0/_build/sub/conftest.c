/* confdefs.h */
#define PACKAGE_NAME "libcpuexec"
#define PACKAGE_TARNAME "libcpuexec"
#define PACKAGE_VERSION "0.1.0"
#define PACKAGE_STRING "libcpuexec 0.1.0"
#define PACKAGE_BUGREPORT "https://github.com/libcpuexec/libcpuexec/issues"
#define PACKAGE_URL ""
#define PACKAGE "libcpuexec"
#define VERSION "0.1.0"
/* end confdefs.h.  */

int
main (void)
{

  ;
  return 0;
}
